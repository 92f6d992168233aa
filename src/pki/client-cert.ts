/** `gw pki client issue`: client certificates for VPN users, signed by a gw CA (or any CA key pair). */
import * as der from "./der.ts";
import {
  BACKDATE_MS,
  DAY_MS,
  OID,
  distinguishedName,
  extKeyUsageValue,
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
  type ExtKeyUsageName,
  type KeyAlgorithm,
  type KeyUsageName,
} from "./x509-build.ts";

export interface ClientCertificateOptions {
  ca: CaPair;
  commonName: string;
  /** Written to subjectAltName as rfc822Name. */
  email?: string;
  /** Written to the subject as UID (0.9.2342.19200300.100.1.1), after CN. */
  uid?: string;
  /** Validity in days from notBefore (may be fractional). */
  days: number;
  /** Start of validity (default: five minutes ago). A past date with a short `days` gives an expired certificate. */
  notBefore?: Date;
  /** Default ["digitalSignature"]; [] leaves the extension out. */
  keyUsage?: KeyUsageName[];
  /** Default ["clientAuth"]; names or dotted OIDs; [] leaves the extension out. */
  extKeyUsage?: (ExtKeyUsageName | string)[];
  /** Default "ec-p256". AnyConnect fails RSA client keys under TLS 1.3 (docs/protocol.md 3.1). */
  keyAlgorithm?: KeyAlgorithm;
}

export interface IssuedCertificate {
  certPem: string;
  keyPem: string;
  /** Upper-case hex, as X509Certificate.serialNumber and CRL entries show it. */
  serial: string;
}

/**
 * Issues an end-entity certificate for TLS client authentication. Throws GwError
 * `pki_invalid_options` for an unusable CA pair, an empty name or a bad email/days.
 */
export function issueClientCertificate(options: ClientCertificateOptions): IssuedCertificate {
  const { commonName, email, uid, days, keyUsage = ["digitalSignature"], extKeyUsage = ["clientAuth"] } = options;
  const what = "client certificate";
  if (commonName.length === 0) invalidOptions(what, "commonName must not be empty");
  if (!Number.isFinite(days) || days <= 0) invalidOptions(what, `days must be positive, got ${days}`);
  if (email !== undefined && !/^[\x21-\x7e]+@[\x21-\x7e]+$/.test(email)) {
    invalidOptions(what, `not an email address: ${JSON.stringify(email)}`);
  }
  const ca = loadCa(options.ca, what);

  const { publicKey, privateKey } = generateKey(options.keyAlgorithm);
  const notBefore = new Date(Math.floor((options.notBefore?.getTime() ?? Date.now() - BACKDATE_MS) / 1000) * 1000);
  const notAfter = new Date(notBefore.getTime() + Math.round(days * DAY_MS));
  const serial = newSerial();

  const extensions = [
    extension(OID.basicConstraints, true, der.sequence()),
    ...(keyUsage.length > 0 ? [extension(OID.keyUsage, true, keyUsageBits(keyUsage))] : []),
    ...(extKeyUsage.length > 0 ? [extension(OID.extKeyUsage, false, extKeyUsageValue(extKeyUsage))] : []),
    ...(email !== undefined
      ? [extension(OID.subjectAltName, false, der.sequence(der.implicit(1, der.ia5String(email))))]
      : []),
    extension(OID.subjectKeyIdentifier, false, der.octetString(keyIdentifier(publicKey))),
    extension(OID.authorityKeyIdentifier, false, der.sequence(der.implicit(0, der.octetString(ca.keyId)))),
  ];

  const cert = signed(ca.key, (algorithm) =>
    der.sequence(
      der.explicit(0, der.smallInteger(2)),
      der.integer(serial),
      algorithm,
      ca.subject,
      der.sequence(der.time(notBefore), der.time(notAfter)),
      distinguishedName(commonName, uid),
      spkiDer(publicKey),
      der.explicit(3, der.sequence(...extensions)),
    ),
  );
  return {
    certPem: toPem("CERTIFICATE", cert),
    keyPem: privateKey.export({ type: "pkcs8", format: "pem" }) as string,
    serial: Buffer.from(serial).toString("hex").toUpperCase(),
  };
}
