import { X509Certificate, createHash, createPrivateKey } from "node:crypto";
import { GwError, err, ok, type Result } from "../errors.ts";

export interface CertificatePair {
  certPem: string;
  keyPem: string;
}

/** Parses a PEM certificate (the first one in a chain file), or undefined when it does not parse. */
function parseCertificate(certPem: string): X509Certificate | undefined {
  try {
    return new X509Certificate(certPem);
  } catch {
    return undefined;
  }
}

function readable(certPem: string): X509Certificate {
  const cert = parseCertificate(certPem);
  if (!cert) {
    throw new GwError("cert_unreadable", "The server certificate is not a readable PEM certificate.");
  }
  return cert;
}

/**
 * The value for `openconnect --servercert`: `pin-sha256:` + base64 SHA-256 of the certificate's
 * SubjectPublicKeyInfo DER. Throws GwError `cert_unreadable` for a PEM that does not parse
 * (check it with loadCertificatePair first).
 */
export function pinSha256(certPem: string): string {
  const spki = readable(certPem).publicKey.export({ type: "spki", format: "der" });
  return `pin-sha256:${createHash("sha256").update(spki).digest("base64")}`;
}

/** When the certificate stops being valid (notAfter). Throws GwError `cert_unreadable` like pinSha256. */
export function certificateExpiry(certPem: string): Date {
  const cert = readable(certPem);
  return cert.validToDate ?? new Date(cert.validTo);
}

/**
 * Checks an operator-supplied certificate and key: both PEMs parse, the key is unencrypted,
 * and the key belongs to the certificate (the first certificate when certPem is a chain).
 * Error codes: cert_unreadable, key_unreadable, cert_key_mismatch.
 */
export function loadCertificatePair(certPem: string, keyPem: string): Result<CertificatePair> {
  const cert = parseCertificate(certPem);
  if (!cert) {
    return err(
      "cert_unreadable",
      "The server certificate could not be parsed. Provide a PEM file that starts with " +
        "'-----BEGIN CERTIFICATE-----' (server certificate first, then any intermediates), " +
        "or remove it to let the gateway generate a self-signed one.",
    );
  }
  let key;
  try {
    key = createPrivateKey(keyPem);
  } catch (cause) {
    return err(
      "key_unreadable",
      "The server private key could not be parsed. Provide an unencrypted PEM key " +
        "('-----BEGIN PRIVATE KEY-----', or the RSA/EC variants); decrypt an encrypted key " +
        "with `openssl pkey -in key.pem -out key-plain.pem`.",
      { cause: cause instanceof Error ? cause.message : String(cause) },
    );
  }
  if (!cert.checkPrivateKey(key)) {
    return err(
      "cert_key_mismatch",
      `The server private key does not belong to the certificate (subject ${cert.subject}). ` +
        "Install the key that was used to create the certificate, or replace both files.",
    );
  }
  return ok({ certPem, keyPem });
}
