import type { SamlLogins } from "../control/auth/saml/saml-logins.ts";
import { SAML_PATHS, SSO_ERROR_COOKIE, SSO_TOKEN_COOKIE } from "../control/auth/saml/saml-paths.ts";
import { parseClientDhKey, sealHandoff } from "../control/auth/saml/sso-handoff.ts";
import type { HttpRequest } from "./http-head.ts";
import type { ResponseSpec } from "./http-response.ts";

/** What the tunnel port needs to serve the SAML service provider's pages. */
export interface SamlFront {
  logins: SamlLogins;
  metadata(): string;
  /** Absolute URL of SAML_PATHS.final. */
  finalUrl: string;
}

/** openconnect's listener for the external-browser hand-off (docs/protocol.md §4.1, §4.3). */
export const HANDOFF_URL = "http://localhost:29786/api/sso/";

const PATHS: ReadonlySet<string> = new Set(Object.values(SAML_PATHS));

export function isSamlPath(path: string): boolean {
  return PATHS.has(path);
}

/**
 * The browser's side of single sign-on: login (redirect to the IdP), the assertion consumer
 * service, the SP metadata and the final page. 404 when SAML is not configured.
 */
export async function handleSamlRequest(request: HttpRequest, saml: SamlFront | undefined): Promise<ResponseSpec> {
  const [path, query = ""] = request.target.split("?", 2) as [string, string?];
  if (!saml) return page(404, "Not Found", "Single sign-on is not configured on this gateway.");
  if (request.method === "GET" && path === SAML_PATHS.login) {
    const url = await saml.logins.loginUrl(new URLSearchParams(query).get("handle") ?? "");
    return url.ok ? redirect(url.value) : page(400, "Bad Request", url.error.message);
  }
  if (request.method === "POST" && path === SAML_PATHS.acs) return acs(request, saml);
  if (request.method === "GET" && path === SAML_PATHS.metadata) {
    return { status: 200, reason: "OK", headers: [["Content-Type", "application/samlmetadata+xml; charset=utf-8"]], body: saml.metadata() };
  }
  if (request.method === "GET" && path === SAML_PATHS.final) {
    const refused = new URLSearchParams(query).get("status") === "refused";
    return page(200, "OK", refused ? "The login was refused: your VPN client shows why. You may close this window." : "Login complete: return to your VPN client. You may close this window.");
  }
  return { status: 405, reason: "Method Not Allowed", headers: [["Allow", path === SAML_PATHS.acs ? "POST" : "GET"], ["Content-Type", "text/plain; charset=utf-8"]], body: "method not allowed\n" };
}

/** HTTP-POST binding: SAMLResponse and RelayState, urlencoded. */
async function acs(request: HttpRequest, saml: SamlFront): Promise<ResponseSpec> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") return page(415, "Unsupported Media Type", "The identity provider must post a form (HTTP-POST binding).");
  const form = new URLSearchParams(new TextDecoder().decode(request.body));
  const response = form.get("SAMLResponse");
  const relayState = form.get("RelayState");
  if (!response || !relayState) return page(400, "Bad Request", "SAMLResponse and RelayState are both required.");
  const consumed = await saml.logins.consume(response, relayState);
  if (!consumed.ok) return page(400, "Bad Request", consumed.error.message);
  const attempt = consumed.value;
  if (attempt.browserMode === "external") {
    // Valid or not, the client gets a token: posting it tells it the outcome (success or why not).
    const key = parseClientDhKey(attempt.dhPubkey);
    if (!key.ok) return page(400, "Bad Request", key.error.message);
    const blob = Buffer.from(sealHandoff(key.value, attempt.token!)).toString("base64");
    const final = attempt.outcome?.ok ? saml.finalUrl : `${saml.finalUrl}?status=refused`;
    return redirect(`${HANDOFF_URL}${encodeURIComponent(blob)}?return=${encodeURIComponent(final)}`);
  }
  // Webview: the client watches the browser's cookies (docs/protocol.md §4.1).
  const cookie = attempt.outcome?.ok
    ? `${SSO_TOKEN_COOKIE}=${attempt.token}`
    : `${SSO_ERROR_COOKIE}=${encodeURIComponent(attempt.outcome?.error.message ?? "single sign-on failed")}`;
  return redirect(saml.finalUrl, [["Set-Cookie", `${cookie}; Path=/; Secure; HttpOnly`]]);
}

function redirect(location: string, extra: [string, string][] = []): ResponseSpec {
  return { status: 302, reason: "Found", headers: [["Location", location], ["Cache-Control", "no-store"], ...extra], body: "" };
}

function page(status: number, reason: string, message: string): ResponseSpec {
  const text = message.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return {
    status,
    reason,
    headers: [["Content-Type", "text/html; charset=utf-8"], ["Cache-Control", "no-store"]],
    body: `<!DOCTYPE html><html><head><meta charset="utf-8"><title>gw VPN</title></head><body><p>${text}</p></body></html>\n`,
  };
}
