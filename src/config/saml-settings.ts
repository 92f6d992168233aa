import { z } from "zod";

const httpsUrl = (what: string) =>
  z.string().superRefine((text, ctx) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return ctx.addIssue({ code: "custom", message: `${what} "${text}" is not a URL` });
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") ctx.addIssue({ code: "custom", message: `${what} must be an http(s) URL` });
    if (url.search || url.hash) ctx.addIssue({ code: "custom", message: `${what} must not have a query or fragment` });
  });

/**
 * SAML 2.0 single sign-on (groups whose auth is "saml"). All absent: SAML is off. The IdP's
 * entry point, its signing certificate and the base URL browsers use to reach the tunnel port
 * go together; the others have defaults.
 */
export const samlSettingsShape = {
  samlIdpUrl: httpsUrl("samlIdpUrl").optional().describe("SAML: the identity provider's single sign-on URL (HTTP-Redirect binding) (restart required)"),
  samlIdpCertFile: z.string().min(1).optional().describe("SAML: PEM file with the identity provider's signing certificate (restart required)"),
  samlBaseUrl: httpsUrl("samlBaseUrl")
    .refine((u) => !u.endsWith("/"), "samlBaseUrl has no trailing slash, e.g. https://vpn.example.com")
    .optional()
    .describe("SAML: how browsers reach the tunnel port, e.g. https://vpn.example.com; the ACS is BASE/+CSCOE+/saml/sp/acs (restart required)"),
  samlEntityId: z.string().min(1).max(1024).optional().describe("SAML: this service provider's entity id (default: BASE/+CSCOE+/saml/sp/metadata) (restart required)"),
  samlGroupAttribute: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .describe("SAML: the assertion attribute naming the user's groups; absent: the groups stored for the user apply (restart required)"),
  samlUserAttribute: z.string().min(1).max(256).optional().describe("SAML: the assertion attribute holding the user name; absent: the NameID (restart required)"),
};

type SamlLike = { samlIdpUrl?: string; samlIdpCertFile?: string; samlBaseUrl?: string };

/** Either none of the three required SAML settings, or all of them. */
export function samlSettingsComplete(c: SamlLike, ctx: z.RefinementCtx): void {
  const required = { samlIdpUrl: c.samlIdpUrl, samlIdpCertFile: c.samlIdpCertFile, samlBaseUrl: c.samlBaseUrl } as const;
  const given = Object.entries(required).filter(([, v]) => v !== undefined);
  if (given.length === 0 || given.length === 3) return;
  for (const [key, value] of Object.entries(required)) {
    if (value === undefined) {
      ctx.addIssue({ code: "custom", path: [key], message: `SAML needs samlIdpUrl, samlIdpCertFile and samlBaseUrl together (--saml-idp-url, --saml-idp-cert, --saml-base-url): ${key} is missing` });
    }
  }
}
