import { describe, expect, test } from "bun:test";
import type { LoginForm } from "../../../src/control/auth/login-form.ts";
import { formDocument } from "../../../src/front/auth-documents.ts";
import { attr, child, children, parseXmlDocument, text } from "../../../src/front/xml.ts";

const challenge: LoginForm = {
  authId: "challenge",
  message: "Enter the code from your authenticator app.",
  fields: [{ type: "text", name: "otp", label: "One-time code:", conceal: true }],
};

const parse = (xml: string) => {
  const r = parseXmlDocument(xml);
  if (!r.ok) throw r.error;
  return r.value;
};

describe("the one-time code challenge", () => {
  test("form dialect: exactly the spec's document (auth id=challenge, message, form, one text input)", () => {
    const root = parse(formDocument("form", challenge, "ctx"));
    expect(root.name).toBe("auth");
    expect(root.attributes).toEqual({ id: "challenge" });
    expect(children(root).map((c) => c.name)).toEqual(["message", "form"]);
    expect(text(child(root, "message")!)).toBe("Enter the code from your authenticator app.");
    const form = child(root, "form")!;
    expect(form.attributes).toEqual({ method: "post", action: "/auth" });
    expect(children(form).map((c) => c.name)).toEqual(["input"]);
    expect(children(form)[0]!.attributes).toEqual({ type: "text", name: "otp", label: "One-time code:" });
    expect(formDocument("form", challenge, "ctx")).toContain('<input type="text" name="otp" label="One-time code:"/>');
  });

  test("form dialect: a retry's error leads the message (no extra element)", () => {
    const root = parse(formDocument("form", { ...challenge, error: "Wrong code." }, "ctx"));
    expect(children(root).map((c) => c.name)).toEqual(["message", "form"]);
    expect(text(child(root, "message")!)).toBe("Wrong code. Enter the code from your authenticator app.");
  });

  test("XML dialect: a password input in <auth id=challenge>, so openconnect --token-mode fills it", () => {
    const root = parse(formDocument("xml", { ...challenge, error: "Wrong code." }, "ctx"));
    expect(root.name).toBe("config-auth");
    const auth = child(root, "auth")!;
    expect(attr(auth, "id")).toBe("challenge");
    expect(text(child(auth, "error")!)).toBe("Wrong code.");
    const input = child(child(auth, "form")!, "input")!;
    expect(input.attributes).toMatchObject({ type: "password", name: "otp", label: "One-time code:" });
    expect(text(child(child(root, "opaque")!, "auth-handle")!)).toBe("ctx");
  });

  test("the main form is unchanged in both dialects (title kept, field types as given)", () => {
    const main: LoginForm = { authId: "main", message: "m", fields: [{ type: "text", name: "username", label: "Username:" }, { type: "password", name: "password", label: "Password:" }] };
    for (const dialect of ["xml", "form"] as const) {
      const xml = formDocument(dialect, main, "ctx");
      expect(xml).toContain("<title>");
      expect(xml).toContain('<input type="text" name="username" label="Username:"/>');
      expect(xml).toContain('<input type="password" name="password" label="Password:"/>');
    }
  });
});
