import type { SsoPrompt } from "../control/auth/login-form.ts";
import type { XmlNode } from "./xml.ts";

/**
 * The sso-v2 children of `<auth>` (docs/protocol.md §4.2, the names Cisco ASA uses). The form that
 * follows holds `<input type="sso">`, which makes the client start the browser login.
 */
export function ssoElements(sso: SsoPrompt): XmlNode[] {
  return [
    { name: "sso-v2-login", children: [sso.loginUrl] },
    { name: "sso-v2-login-final", children: [sso.finalUrl] },
    { name: "sso-v2-token-cookie-name", children: [sso.tokenCookie] },
    { name: "sso-v2-error-cookie-name", children: [sso.errorCookie] },
    ...(sso.browserMode === "external" ? [{ name: "sso-v2-browser-mode", children: ["external"] }] : []),
  ];
}
