/**
 * The load client's login documents, checked against the gateway's own code both ways: the
 * gateway's parser reads what the client posts, and the client reads what the gateway renders.
 */
import { describe, expect, test } from "bun:test";
import { formDocument, refusalDocument, successDocument } from "../../../src/front/auth-documents.ts";
import { parseAuthRequest } from "../../../src/front/auth-request.ts";
import { child, text } from "../../../src/front/xml.ts";
import { answerForm, authReplyBody, initBody, parseAuthAnswer } from "../../../scripts/bench/load/xml-auth.ts";

const xmlType = "application/xml; charset=utf-8";
const asBody = (s: string) => new TextEncoder().encode(s);

describe("what the client posts", () => {
  test("the init is an XML init the gateway reads, with the client's version and capabilities", () => {
    const r = parseAuthRequest(xmlType, asBody(initBody("https://203.0.113.1/")));
    if (!r.ok) throw r.error;
    expect(r.value.dialect).toBe("xml");
    expect(r.value.kind).toBe("init");
    expect(r.value.clientVersion).toBe("v9.01-3");
    expect(r.value.capabilities).toEqual(["single-sign-on-v2"]);
  });

  test("the auth-reply carries the answers in <auth> and the opaque copied back (escaped where needed)", () => {
    const opaque = '<opaque is-for="sg"><auth-handle>ctx-42</auth-handle></opaque>';
    const r = parseAuthRequest(xmlType, asBody(authReplyBody(opaque, [["username", "load7"], ["password", "p<&>\"w"]])));
    if (!r.ok) throw r.error;
    expect(r.value.kind).toBe("auth-reply");
    expect(Object.fromEntries(r.value.fields)).toEqual({ username: "load7", password: 'p<&>"w' });
    expect(text(child(r.value.opaque!, "auth-handle")!)).toBe("ctx-42");
  });
});

describe("what the gateway answers", () => {
  const form = { authId: "main", message: "Log in", fields: [{ type: "text" as const, name: "username", label: "Username:" }, { type: "password" as const, name: "password", label: "Password:" }] };

  test("a form: its fields, action and opaque; answered from user and password", () => {
    const a = parseAuthAnswer(200, ["webvpncontext=abc; Secure; HttpOnly"], formDocument("xml", form, "ctx-1"));
    if (!a.ok) throw a.error;
    if (a.value.kind !== "form") throw new Error(`expected a form, got ${a.value.kind}`);
    expect(a.value.action).toBe("/auth");
    expect(a.value.fields).toEqual([{ type: "text", name: "username" }, { type: "password", name: "password" }]);
    expect(a.value.opaque).toContain("<auth-handle>ctx-1</auth-handle>");
    const answers = answerForm(a.value.fields, "load3", "secret");
    expect(answers.ok && answers.value).toEqual([["username", "load3"], ["password", "secret"]]);
  });

  test("a form asking for a one-time code cannot be answered: the login fails with a reason", () => {
    const otp = answerForm([{ type: "text", name: "otp" }], "u", "p");
    expect(otp.ok).toBe(false);
    if (!otp.ok) expect(otp.error.message).toContain('"otp"');
  });

  test("success: the token, from the webvpn cookie or else from <session-token>", () => {
    const doc = successDocument("xml", "TOKEN-1", "hash");
    const fromCookie = parseAuthAnswer(200, ["webvpncontext=; expires=Thu, 01 Jan 1970 00:00:00 GMT", "webvpn=TOKEN-COOKIE; Secure"], doc);
    expect(fromCookie.ok && fromCookie.value).toEqual({ kind: "success", token: "TOKEN-COOKIE" });
    const fromBody = parseAuthAnswer(200, [], doc);
    expect(fromBody.ok && fromBody.value).toEqual({ kind: "success", token: "TOKEN-1" });
  });

  test("a refusal (no form fields) and a wrong password (the form again with <error>)", () => {
    const refused = parseAuthAnswer(200, [], refusalDocument("xml", "your address is banned for 300 s"));
    expect(refused.ok && refused.value).toEqual({ kind: "refused", message: "your address is banned for 300 s" });
    const again = parseAuthAnswer(200, [], formDocument("xml", { ...form, error: "Wrong user name or password" }, "ctx-2"));
    expect(again.ok && again.value.kind === "form" && again.value.error).toBe("Wrong user name or password");
  });

  test("an HTTP error status is a refusal naming the status; a document without <auth> is an error", () => {
    const r = parseAuthAnswer(429, [], "too many requests\n");
    expect(r.ok && r.value).toEqual({ kind: "refused", message: "HTTP 429: too many requests" });
    const bad = parseAuthAnswer(200, [], "<html>hello</html>");
    expect(bad.ok).toBe(false);
  });
});
