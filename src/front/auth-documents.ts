import type { LoginForm } from "../control/auth/login-form.ts";
import { ssoElements } from "./sso-documents.ts";
import { inputType, specChallengeElement } from "./challenge-document.ts";
import { renderXml, xmlDocument, type XmlNode } from "./xml.ts";

/**
 * The XML the client reads during login (docs/protocol.md §2.4, §2.8, §2.9). Two dialects:
 * - "xml": openconnect/AnyConnect aggregate auth, everything under <config-auth>;
 * - "form": the legacy fallback and the spec's literal flow, a bare <auth> root.
 */
export type AuthDialect = "xml" | "form";

const TITLE = "gw VPN";

export function formDocument(dialect: AuthDialect, form: LoginForm, contextId: string): string {
  // The spec's literal flow gets its challenge exactly as written (no title).
  const auth = dialect === "form" && form.authId === "challenge" ? specChallengeElement(form) : authElement(form, dialect);
  if (dialect === "form") return xmlDocument(auth);
  return xmlDocument(
    configAuth("auth-request", [
      // Copied back verbatim by the client (§2.4): how a context survives a new TLS connection.
      { name: "opaque", attrs: { "is-for": "sg" }, children: [{ name: "auth-handle", children: [contextId] }] },
      auth,
    ]),
  );
}

/** The token goes in all three places (docs/architecture.md §2 "Two dialects"); the cookie is set by the caller. */
export function successDocument(dialect: AuthDialect, token: string, configHash: string, banner?: string): string {
  const auth: XmlNode = {
    name: "auth",
    attrs: { id: "success" },
    children: [
      { name: "title", children: [TITLE] },
      banner ? { name: "banner", children: [banner] } : undefined,
      { name: "session-token", children: [token] },
      { name: "config-hash", children: [configHash] },
    ],
  };
  if (dialect === "form") return xmlDocument(auth);
  return xmlDocument(configAuth("complete", [{ name: "session-token", children: [token] }, auth]));
}

/** A final refusal: no form fields, so the client reports the message and stops (§2.8). */
export function refusalDocument(dialect: AuthDialect, message: string): string {
  const auth: XmlNode = {
    name: "auth",
    attrs: { id: "failure" },
    children: [{ name: "title", children: [TITLE] }, { name: "error", children: [message] }],
  };
  return xmlDocument(dialect === "form" ? auth : configAuth("auth-request", [auth]));
}

function configAuth(type: string, children: XmlNode[]): XmlNode {
  return {
    name: "config-auth",
    attrs: { client: "vpn", type, "aggregate-auth-version": "2" },
    children: [{ name: "version", attrs: { who: "sg" }, children: ["gw"] }, ...children],
  };
}

function authElement(form: LoginForm, dialect: AuthDialect): XmlNode {
  const inputs: XmlNode[] = form.fields.map((f) => ({
    name: "input",
    attrs: { type: inputType(f, dialect), name: f.name, label: f.label, value: f.value },
  }));
  if (form.groupChoice) {
    inputs.push({
      name: "select",
      attrs: { name: "group_list", label: "GROUP:" },
      children: form.groupChoice.options.map((option) => ({
        name: "option",
        attrs: { value: option, selected: option === form.groupChoice!.selected ? "true" : undefined },
        children: [option],
      })),
    });
  }
  return {
    name: "auth",
    attrs: { id: form.authId },
    children: [
      { name: "title", children: [TITLE] },
      { name: "message", children: [form.message] },
      form.error ? { name: "error", children: [form.error] } : undefined,
      ...(form.sso ? ssoElements(form.sso) : []),
      { name: "form", attrs: { method: "post", action: "/auth" }, children: inputs },
    ],
  };
}
