import { z } from "zod";
import { setting } from "./setting-row.ts";
import { fileSchema, httpsUrlSchema } from "./setting-schemas.ts";

const samlTogether = ["samlIdpUrl", "samlIdpCertFile", "samlBaseUrl"] as const;
const others = (key: (typeof samlTogether)[number]) => samlTogether.filter((k) => k !== key);

/**
 * SAML 2.0 single sign-on (groups whose auth is "saml"), rows of the settings table. All absent:
 * SAML is off. The IdP's entry point, its signing certificate and the base URL browsers use to
 * reach the tunnel port go together; the others have defaults.
 */
export const samlSettings = {
  samlIdpUrl: setting({
    schema: httpsUrlSchema("samlIdpUrl").optional(),
    help: "SAML: the identity provider's single sign-on URL (HTTP-Redirect binding)",
    flag: "saml-idp-url",
    valueHint: "URL",
    whenAbsent: "SAML is off",
    example: "https://idp.example/sso",
    needs: others("samlIdpUrl"),
    applies: "restart",
  }),
  samlIdpCertFile: setting({
    schema: fileSchema.optional(),
    help: "SAML: PEM file with the identity provider's signing certificate",
    flag: "saml-idp-cert",
    valueHint: "FILE",
    whenAbsent: "SAML is off",
    example: "/etc/gw/idp-signing.pem",
    needs: others("samlIdpCertFile"),
    applies: "restart",
  }),
  samlBaseUrl: setting({
    schema: httpsUrlSchema("samlBaseUrl")
      .refine((u) => !u.endsWith("/"), "samlBaseUrl has no trailing slash, e.g. https://vpn.example.com")
      .optional(),
    help: "SAML: how browsers reach the tunnel port, e.g. https://vpn.example.com; the ACS is BASE/+CSCOE+/saml/sp/acs",
    flag: "saml-base-url",
    valueHint: "URL",
    whenAbsent: "SAML is off",
    example: "https://vpn.example.com",
    needs: others("samlBaseUrl"),
    applies: "restart",
  }),
  samlEntityId: setting({
    schema: z.string().min(1).max(1024).optional(),
    help: "SAML: this service provider's entity id",
    flag: "saml-entity-id",
    valueHint: "ID",
    whenAbsent: "BASE/+CSCOE+/saml/sp/metadata",
    example: "urn:example:gw",
    applies: "restart",
  }),
  samlGroupAttribute: setting({
    schema: z.string().min(1).max(256).optional(),
    help: "SAML: the assertion attribute naming the user's groups (those that exist in gw replace the stored ones)",
    flag: "saml-group-attribute",
    valueHint: "ATTRIBUTE",
    whenAbsent: "the groups stored for the user apply",
    example: "memberOf",
    applies: "restart",
  }),
  samlUserAttribute: setting({
    schema: z.string().min(1).max(256).optional(),
    help: "SAML: the assertion attribute holding the user name",
    flag: "saml-user-attribute",
    valueHint: "ATTRIBUTE",
    whenAbsent: "the NameID",
    example: "uid",
    applies: "restart",
  }),
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
