import { describe, expect, test } from "bun:test";
import type { LoginForm } from "../../../../../src/control/auth/login-form.ts";
import { formDocument } from "../../../../../src/front/auth-documents.ts";
import { attr, child, children, parseXmlDocument, text } from "../../../../../src/front/xml.ts";

const form = (browserMode: "external" | "webview"): LoginForm => ({
  authId: "main",
  message: "Complete the login in your browser.",
  fields: [{ type: "sso", name: "sso-token", label: "SSO token:" }],
  sso: {
    loginUrl: "https://vpn.example/+CSCOE+/saml/sp/login?handle=abc&x=1",
    finalUrl: "https://vpn.example/+CSCOE+/saml_ac_login.html",
    tokenCookie: "acSamlv2Token",
    errorCookie: "acSamlv2Error",
    browserMode,
  },
});

const parse = (xml: string) => {
  const r = parseXmlDocument(xml);
  if (!r.ok) throw r.error;
  return r.value;
};

describe("the sso-v2 auth-request document (docs/protocol.md §4.2)", () => {
  test("external mode: every sso-v2 element, in <auth>, before the form with the sso input", () => {
    const doc = parse(formDocument("xml", form("external"), "ctx-1"));
    expect(doc.name).toBe("config-auth");
    expect(attr(doc, "type")).toBe("auth-request");
    expect(text(child(child(doc, "opaque")!, "auth-handle")!)).toBe("ctx-1");
    const auth = child(doc, "auth")!;
    expect(attr(auth, "id")).toBe("main");
    expect(children(auth).map((c) => c.name)).toEqual([
      "title",
      "message",
      "sso-v2-login",
      "sso-v2-login-final",
      "sso-v2-token-cookie-name",
      "sso-v2-error-cookie-name",
      "sso-v2-browser-mode",
      "form",
    ]);
    expect(text(child(auth, "sso-v2-login")!)).toBe("https://vpn.example/+CSCOE+/saml/sp/login?handle=abc&x=1");
    expect(text(child(auth, "sso-v2-login-final")!)).toBe("https://vpn.example/+CSCOE+/saml_ac_login.html");
    expect(text(child(auth, "sso-v2-token-cookie-name")!)).toBe("acSamlv2Token");
    expect(text(child(auth, "sso-v2-error-cookie-name")!)).toBe("acSamlv2Error");
    expect(text(child(auth, "sso-v2-browser-mode")!)).toBe("external");
    const inputs = children(child(auth, "form")!, "input");
    expect(inputs).toHaveLength(1);
    expect(attr(inputs[0]!, "type")).toBe("sso");
    expect(attr(inputs[0]!, "name")).toBe("sso-token");
    expect(attr(child(auth, "form")!, "method")).toBe("post");
  });

  test("webview mode: no sso-v2-browser-mode element", () => {
    const auth = child(parse(formDocument("xml", form("webview"), "ctx-2")), "auth")!;
    expect(child(auth, "sso-v2-browser-mode")).toBeUndefined();
    expect(child(auth, "sso-v2-login")).toBeDefined();
  });

  test("a form without sso has none of the sso-v2 elements", () => {
    const plain: LoginForm = { authId: "main", message: "m", fields: [{ type: "text", name: "username", label: "Username:" }] };
    const auth = child(parse(formDocument("xml", plain, "c")), "auth")!;
    expect(children(auth).some((c) => c.name.startsWith("sso-v2"))).toBe(false);
  });
});
