/** `gw pki ca create`: a small certificate authority for client certificates (EC P-256; a root or an intermediate). */
import * as der from "./der.ts";
import {
  BACKDATE_MS,
  DAY_MS,
  OID,
  distinguishedName,
  extension,
  generateKey,
  invalidOptions,
  keyIdentifier,
  keyUsageBits,
  loadCa,
  newSerial,
  signed,
  spkiDer,
  toPem,
  type CaPair,
  type KeyAlgorithm,
} from "./x509-build.ts";

export interface CertificateAuthorityOptions {
  commonName: string;
  /** Validity in days from now (default 3650). */
  days?: number;
  /** Start of validity (default: five minutes ago). */
  notBefore?: Date;
  keyAlgorithm?: KeyAlgorithm;
  /** Makes an intermediate CA signed by this CA instead of a self-signed root. */
  issuer?: CaPair;
}

/**
 * Creates a CA certificate (self-signed, or signed by `issuer`): basicConstraints CA:TRUE (critical), keyUsage
 * keyCertSign + cRLSign (critical), subjectKeyIdentifier. Throws GwError `pki_invalid_options`
 * for an empty name or bad days: configuration bugs, not runtime conditions.
 */
export function createCertificateAuthority(options: CertificateAuthorityOptions): CaPair {
  const { commonName, days = 3650, keyAlgorithm } = options;
  if (commonName.length === 0) invalidOptions("CA", "commonName must not be empty");
  if (!Number.isFinite(days) || days <= 0) invalidOptions("CA", `days must be positive, got ${days}`);

  const { publicKey, privateKey } = generateKey(keyAlgorithm);
  const notBefore = new Date(Math.floor(((options.notBefore?.getTime() ?? Date.now() - BACKDATE_MS)) / 1000) * 1000);
  const notAfter = new Date(notBefore.getTime() + Math.round(days * DAY_MS));
  const name = distinguishedName(commonName);
  const keyId = keyIdentifier(publicKey);
  const parent = options.issuer ? loadCa(options.issuer, "intermediate CA") : undefined;

  const cert = signed(parent?.key ?? privateKey, (algorithm) =>
    der.sequence(
      der.explicit(0, der.smallInteger(2)), // v3
      der.integer(newSerial()),
      algorithm,
      parent?.subject ?? name,
      der.sequence(der.time(notBefore), der.time(notAfter)),
      name,
      spkiDer(publicKey),
      der.explicit(
        3,
        der.sequence(
          extension(OID.basicConstraints, true, der.sequence(der.boolean(true))),
          extension(OID.keyUsage, true, keyUsageBits(["keyCertSign", "cRLSign"])),
          extension(OID.subjectKeyIdentifier, false, der.octetString(keyId)),
          ...(parent
            ? [extension(OID.authorityKeyIdentifier, false, der.sequence(der.implicit(0, der.octetString(parent.keyId))))]
            : []),
        ),
      ),
    ),
  );
  return {
    certPem: toPem("CERTIFICATE", cert),
    keyPem: privateKey.export({ type: "pkcs8", format: "pem" }) as string,
  };
}
