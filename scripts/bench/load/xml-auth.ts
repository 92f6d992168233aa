/**
 * openconnect's XML login documents (docs/protocol.md §2.3–§2.8), client side: the init and
 * auth-reply bodies it posts, and how it reads the gateway's answer. The gateway's documents are
 * small and known, so expressions over the text are enough; names are matched case-sensitively,
 * as openconnect does.
 */
import { err, ok, type Result } from "../../../src/errors.ts";

/** What openconnect 9.01 (Debian) says about itself in every document. */
const VERSION = "v9.01-3";
const CAPABILITIES = "<capabilities><auth-method>single-sign-on-v2</auth-method></capabilities>";

export function initBody(groupAccess: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<config-auth client="vpn" type="init" aggregate-auth-version="2">` +
    `<version who="vpn">${VERSION}</version><device-id>linux-64</device-id>${CAPABILITIES}` +
    `<group-access>${escapeXml(groupAccess)}</group-access></config-auth>`
  );
}

/** §2.5: every answered field as <NAME>value</NAME> inside <auth>, the last <opaque> copied verbatim. */
export function authReplyBody(opaque: string | undefined, answers: readonly [string, string][]): string {
  const fields = answers.map(([name, value]) => `<${name}>${escapeXml(value)}</${name}>`).join("");
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<config-auth client="vpn" type="auth-reply" aggregate-auth-version="2">` +
    `<version who="vpn">${VERSION}</version><device-id>linux-64</device-id>${CAPABILITIES}` +
    `${opaque ?? ""}<auth>${fields}</auth></config-auth>`
  );
}

export interface FormField {
  readonly type: string;
  readonly name: string;
}

export type AuthAnswer =
  /** Another prompt: post the fields to `action` (with `opaque` copied back). */
  | { kind: "form"; authId: string; action: string; opaque?: string; fields: FormField[]; error?: string }
  | { kind: "success"; token: string }
  /** No form to answer: the login is over (§2.8). */
  | { kind: "refused"; message: string };

/**
 * Reads a login answer the way openconnect decides (§2.8): success only with <auth id="success">;
 * the token from Set-Cookie webvpn= or a <session-token> element; a form is another prompt.
 */
export function parseAuthAnswer(status: number, setCookies: readonly string[], body: string): Result<AuthAnswer> {
  if (status !== 200) {
    const reason = firstText(body, "error") ?? (body.trim().split("\n")[0]?.slice(0, 200) || "no body");
    return ok({ kind: "refused", message: `HTTP ${status}: ${reason}` });
  }
  const authId = /<auth\s+id="([^"]*)"/.exec(body)?.[1];
  if (authId === undefined) return err("load.auth-document", `the login answer has no <auth id=...> element: ${body.slice(0, 200)}`);
  if (authId === "success") {
    const token = webvpnCookie(setCookies) ?? firstText(body, "session-token");
    if (!token) return err("load.auth-document", "login succeeded but carried no webvpn cookie or <session-token>");
    return ok({ kind: "success", token });
  }
  const form = /<form\b([^>]*)>([\s\S]*?)<\/form>/.exec(body);
  const fields: FormField[] = [];
  for (const m of (form?.[2] ?? "").matchAll(/<input\b([^>]*)\/?>/g)) {
    const type = attribute(m[1]!, "type");
    const name = attribute(m[1]!, "name");
    if (type && name && type !== "submit" && type !== "reset") fields.push({ type, name });
  }
  const error = firstText(body, "error");
  if (!form || fields.length === 0) return ok({ kind: "refused", message: error ?? firstText(body, "message") ?? `login ended at <auth id="${authId}">` });
  const action = attribute(form[1]!, "action") ?? "/";
  const opaque = /<opaque\b[\s\S]*?<\/opaque>/.exec(body)?.[0];
  return ok({ kind: "form", authId, action, opaque, fields, error });
}

/** Answers a form from a user name and password; fields it cannot fill make the login fail. */
export function answerForm(fields: readonly FormField[], user: string, password: string): Result<[string, string][]> {
  const answers: [string, string][] = [];
  for (const f of fields) {
    if (f.type === "hidden") continue; // value not kept by this client; gw's forms have none
    if (f.type === "text" && /^(user|uname)/.test(f.name)) answers.push([f.name, user]);
    else if (f.type === "password") answers.push([f.name, password]);
    else return err("load.auth-field", `the login form asks for "${f.name}" (${f.type}), which the load generator cannot answer: use password-only users`);
  }
  return ok(answers);
}

function webvpnCookie(setCookies: readonly string[]): string | undefined {
  for (const c of setCookies) {
    const m = /^\s*webvpn=([^;]*)/.exec(c);
    if (m && m[1]) return m[1];
  }
  return undefined;
}

function firstText(body: string, element: string): string | undefined {
  const m = new RegExp(`<${element}(?:\\s[^>]*)?>([^<]*)</${element}>`).exec(body);
  return m ? unescapeXml(m[1]!) : undefined;
}

function attribute(attrs: string, name: string): string | undefined {
  const m = new RegExp(`\\b${name}="([^"]*)"`).exec(attrs);
  return m ? unescapeXml(m[1]!) : undefined;
}

export function escapeXml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function unescapeXml(s: string): string {
  return s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, "&");
}
