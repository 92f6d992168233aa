import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import type { GatewayConfig } from "../config/gateway-config.ts";
import { SamlLogins } from "../control/auth/saml/saml-logins.ts";
import { SAML_PATHS } from "../control/auth/saml/saml-paths.ts";
import { SamlStep } from "../control/auth/saml/saml-step.ts";
import { err, ok, type Result } from "../errors.ts";
import type { UserRecord } from "../store/records.ts";
import type { SamlFront } from "../front/saml-endpoints.ts";
import type { Log } from "../log/log-line.ts";

export interface SamlSetup {
  step: SamlStep;
  front: SamlFront;
}

/** What SAML needs before the gateway opens anything: the IdP's certificate and the provider's code. */
export interface SamlReady {
  idpCertPem: string;
  SamlProvider: typeof import("../control/auth/saml/saml-provider.ts").SamlProvider;
}

/**
 * When SAML is configured: reads the IdP certificate (a bad file stops the start before anything
 * opens) and loads the service provider's module. That module brings node-saml and its XML
 * signature stack (about a megabyte of code; 13 MiB of memory loaded alone in a bare Bun, about
 * 3 MiB of gw serve's), so a gateway without SAML never loads it.
 */
export async function loadSaml(config: GatewayConfig): Promise<Result<SamlReady | undefined>> {
  if (!config.samlIdpCertFile) return ok(undefined);
  const pem = readIdpCertificate(config.samlIdpCertFile);
  if (!pem.ok) return pem;
  const { SamlProvider } = await import("../control/auth/saml/saml-provider.ts");
  return ok({ idpCertPem: pem.value, SamlProvider });
}

/** The SAML service provider from the settings; undefined when SAML is not configured. */
export function setupSaml(
  config: GatewayConfig,
  ready: SamlReady | undefined,
  deps: { findUser(name: string): UserRecord | undefined; groupExists(name: string): boolean; now(): number; log: Log },
): SamlSetup | undefined {
  const { samlIdpUrl, samlBaseUrl } = config;
  if (!samlIdpUrl || !ready || !samlBaseUrl) return undefined;
  const provider = new ready.SamlProvider({
    idpUrl: samlIdpUrl,
    idpCertPem: ready.idpCertPem,
    entityId: config.samlEntityId ?? `${samlBaseUrl}${SAML_PATHS.metadata}`,
    acsUrl: `${samlBaseUrl}${SAML_PATHS.acs}`,
    groupAttribute: config.samlGroupAttribute,
    userAttribute: config.samlUserAttribute,
    now: deps.now,
  });
  const logins = new SamlLogins({ provider, now: deps.now, log: deps.log });
  return {
    step: new SamlStep({ logins, baseUrl: samlBaseUrl, findUser: deps.findUser, groupExists: deps.groupExists }),
    front: { logins, metadata: () => provider.metadata(), finalUrl: `${samlBaseUrl}${SAML_PATHS.final}` },
  };
}

function readIdpCertificate(file: string): Result<string> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    return err("saml_idp_cert_unreadable", `cannot read the SAML IdP certificate ${file}: ${(e as Error).message}`);
  }
  try {
    new X509Certificate(text);
  } catch {
    return err("saml_idp_cert_invalid", `${file} is not a PEM certificate (the SAML IdP's signing certificate)`);
  }
  return ok(text);
}
