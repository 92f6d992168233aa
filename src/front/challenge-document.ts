import type { FormField, LoginForm } from "../control/auth/login-form.ts";
import type { XmlNode } from "./xml.ts";

/**
 * How a field's type is written. A concealed text field (the one-time code) is a password input
 * in openconnect's XML flow: not echoed, and filled by --token-mode=totp in a form whose auth id
 * is "challenge" (docs/protocol.md §2.4, §2.7). The spec's form dialect keeps type "text".
 */
export function inputType(field: FormField, dialect: "xml" | "form"): string {
  return field.conceal && dialect === "xml" ? "password" : field.type;
}

/**
 * The spec's challenge, exactly (gateway-spec.md, "Authentication result"): a bare
 * `<auth id="challenge">` with a `<message>` and a `<form method="post" action="/auth">` of
 * `<input type name label>` elements, nothing else a strict reader would trip on. An error of
 * a previous answer leads the message.
 */
export function specChallengeElement(form: LoginForm): XmlNode {
  return {
    name: "auth",
    attrs: { id: "challenge" },
    children: [
      { name: "message", children: [form.error ? `${form.error} ${form.message}` : form.message] },
      {
        name: "form",
        attrs: { method: "post", action: "/auth" },
        children: form.fields.map((f) => ({ name: "input", attrs: { type: inputType(f, "form"), name: f.name, label: f.label } })),
      },
    ],
  };
}
