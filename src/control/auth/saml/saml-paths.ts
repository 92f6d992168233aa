/** The service provider's pages on the tunnel port (the paths Cisco ASA uses, under /+CSCOE+/). */
export const SAML_PATHS = {
  /** GET ?handle=H: redirects the browser to the IdP with an AuthnRequest. */
  login: "/+CSCOE+/saml/sp/login",
  /** POST SAMLResponse + RelayState (HTTP-POST binding). */
  acs: "/+CSCOE+/saml/sp/acs",
  /** GET: the SP metadata XML for the IdP's configuration. */
  metadata: "/+CSCOE+/saml/sp/metadata",
  /** Where the browser ends (webview mode: the client stops watching there). */
  final: "/+CSCOE+/saml_ac_login.html",
} as const;

/** Cookie names of the webview hand-off (docs/protocol.md §4.2). */
export const SSO_TOKEN_COOKIE = "acSamlv2Token";
export const SSO_ERROR_COOKIE = "acSamlv2Error";
