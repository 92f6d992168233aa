import { SAML, ValidateInResponseTo, type Profile, type SamlConfig } from "@node-saml/node-saml";
import { err, ok, type Result } from "../../../errors.ts";
import { RequestIdCache } from "./request-id-cache.ts";

export interface SamlProviderOptions {
  /** The IdP's single sign-on URL (HTTP-Redirect binding). */
  idpUrl: string;
  /** The IdP's signing certificate (PEM). */
  idpCertPem: string;
  /** Our entity id: the AuthnRequest's Issuer and the Audience we require. */
  entityId: string;
  /** Where the IdP posts the response (HTTP-POST binding). */
  acsUrl: string;
  /** Attribute naming the user's groups; absent: none taken from the assertion. */
  groupAttribute?: string;
  /** Attribute naming the user; absent: the NameID. */
  userAttribute?: string;
  /** How long an AuthnRequest may wait for its answer. */
  requestTtlMs?: number;
  clockSkewMs?: number;
  now(): number;
}

/** What a valid assertion says, and what is needed to use it once. */
export interface SamlAssertion {
  userName: string;
  /** From the group attribute; undefined when no group attribute is configured. */
  groups?: string[];
  issuer: string;
  assertionId: string;
  inResponseTo: string;
  /** Conditions NotOnOrAfter, ms since the epoch (or a default lifetime). */
  expiresAt: number;
}

const UNSPECIFIED_NAMEID = "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified";

/**
 * The service provider, on @node-saml/node-saml: AuthnRequests (HTTP-Redirect, unsigned),
 * response validation (signature by the configured IdP certificate on the assertion, audience,
 * NotBefore/NotOnOrAfter, InResponseTo of a request we sent and have not seen answered), metadata.
 */
export class SamlProvider {
  private readonly requests: RequestIdCache;

  constructor(private readonly o: SamlProviderOptions) {
    this.requests = new RequestIdCache(o.requestTtlMs ?? 10 * 60_000, o.now);
  }

  /** The IdP URL carrying a new AuthnRequest with this ID, and RelayState. */
  async authorizeUrl(requestId: string, relayState: string): Promise<Result<string>> {
    try {
      return ok(await this.saml(requestId).getAuthorizeUrlAsync(relayState, undefined, {}));
    } catch (e) {
      return err("saml_request_failed", `cannot build the SAML request: ${(e as Error).message}`);
    }
  }

  /** Checks a base64 SAMLResponse from the HTTP-POST binding. */
  async validate(samlResponse: string): Promise<Result<SamlAssertion>> {
    let profile: Profile | null;
    try {
      ({ profile } = await this.saml().validatePostResponseAsync({ SAMLResponse: samlResponse }));
    } catch (e) {
      return err("saml_invalid", `the SAML response was refused: ${(e as Error).message}`);
    }
    if (!profile) return err("saml_invalid", "the SAML response holds no assertion");
    return this.assertionOf(profile);
  }

  metadata(): string {
    return this.saml().generateServiceProviderMetadata(null, null);
  }

  private assertionOf(profile: Profile): Result<SamlAssertion> {
    const attributes = (profile.attributes ?? {}) as Record<string, unknown>;
    const userName = this.o.userAttribute ? values(attributes[this.o.userAttribute])[0] : profile.nameID;
    if (!userName) {
      return err("saml_no_user", this.o.userAttribute ? `the assertion has no ${this.o.userAttribute} attribute to name the user` : "the assertion has no NameID");
    }
    const assertion = (profile.getAssertion?.() as { Assertion?: { $?: { ID?: string }; Conditions?: { $?: { NotOnOrAfter?: string } }[] } } | undefined)?.Assertion;
    const assertionId = assertion?.$?.ID;
    if (!assertionId) return err("saml_invalid", "the assertion has no ID");
    if (typeof profile.inResponseTo !== "string") return err("saml_invalid", "the response does not answer one of our requests (no InResponseTo)");
    const notOnOrAfter = Date.parse(assertion?.Conditions?.[0]?.$?.NotOnOrAfter ?? "");
    return ok({
      userName: userName.trim(),
      groups: this.o.groupAttribute ? values(attributes[this.o.groupAttribute]) : undefined,
      issuer: profile.issuer ?? "",
      assertionId,
      inResponseTo: profile.inResponseTo,
      expiresAt: Number.isFinite(notOnOrAfter) ? notOnOrAfter : this.o.now() + 60 * 60_000,
    });
  }

  private saml(requestId?: string): SAML {
    const config: SamlConfig = {
      entryPoint: this.o.idpUrl,
      idpCert: this.o.idpCertPem,
      issuer: this.o.entityId,
      audience: this.o.entityId,
      callbackUrl: this.o.acsUrl,
      identifierFormat: UNSPECIFIED_NAMEID,
      disableRequestedAuthnContext: true,
      // The assertion must be signed; a signature on the whole response is welcome, not required.
      wantAssertionsSigned: true,
      wantAuthnResponseSigned: false,
      validateInResponseTo: ValidateInResponseTo.always,
      cacheProvider: this.requests,
      requestIdExpirationPeriodMs: this.o.requestTtlMs ?? 10 * 60_000,
      acceptedClockSkewMs: this.o.clockSkewMs ?? 60_000,
      maxAssertionAgeMs: 10 * 60_000,
      ...(requestId ? { generateUniqueId: () => requestId } : {}),
    };
    return new SAML(config);
  }
}

/** An attribute's values as strings (a single value or a list). */
function values(value: unknown): string[] {
  const list = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
  return list.filter((v): v is string => typeof v === "string").map((v) => v.trim()).filter((v) => v !== "");
}
