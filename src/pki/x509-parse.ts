/**
 * Reads the parts of an X.509 certificate that client authentication needs and node:crypto
 * does not expose on every runtime (key usage, EKU, SAN emails, UID), with @peculiar/asn1-x509.
 */
import { AsnConvert } from "@peculiar/asn1-schema";
import {
  AuthorityKeyIdentifier,
  BasicConstraints,
  Certificate,
  ExtendedKeyUsage,
  KeyUsage,
  SubjectAlternativeName,
  SubjectKeyIdentifier,
  id_ce_authorityKeyIdentifier,
  id_ce_basicConstraints,
  id_ce_extKeyUsage,
  id_ce_keyUsage,
  id_ce_subjectAltName,
  id_ce_subjectKeyIdentifier,
  type Name,
} from "@peculiar/asn1-x509";
import { err, ok, type Result } from "../errors.ts";

const COMMON_NAME = "2.5.4.3";
const UID = "0.9.2342.19200300.100.1.1";
const EMAIL_ADDRESS = "1.2.840.113549.1.9.1";

/** Extensions a verifier must understand when they are critical (RFC 5280 §4.2). */
const UNDERSTOOD = new Set([
  id_ce_basicConstraints,
  id_ce_keyUsage,
  id_ce_extKeyUsage,
  id_ce_subjectAltName,
  id_ce_subjectKeyIdentifier,
  id_ce_authorityKeyIdentifier,
]);

export interface CertificateDetails {
  subjectCN?: string;
  uid?: string;
  /** emailAddress attribute of the subject DN (legacy; SAN is the modern place). */
  subjectEmail?: string;
  /** subjectAltName rfc822Name entries. */
  emails: string[];
  dnsNames: string[];
  /** Normalised serial (see normalizeSerial). */
  serial: string;
  /** KeyUsage names (asn1-x509 spelling, e.g. "digitalSignature"), undefined when absent. */
  keyUsage?: string[];
  /** EKU OIDs, undefined when absent. */
  extKeyUsage?: string[];
  isCa: boolean;
  subjectKeyId?: string;
  authorityKeyId?: string;
  /** OIDs of critical extensions this module does not understand. */
  unknownCritical: string[];
}

/** Upper-case hex of whole bytes without leading zero bytes, as X509Certificate.serialNumber shows it. */
export function normalizeSerial(hex: string): string {
  const even = hex.length % 2 ? `0${hex}` : hex;
  return even.toUpperCase().replace(/^(00)+(?=..)/, "");
}

const hexOf = (b: ArrayBuffer | Uint8Array): string => Buffer.from(b as Uint8Array).toString("hex").toUpperCase();

function attribute(name: Name, type: string): string | undefined {
  for (const rdn of name) for (const atv of rdn) if (atv.type === type) return atv.value.toString();
  return undefined;
}

export function parseCertificateDetails(certDer: Uint8Array): Result<CertificateDetails> {
  try {
    const cert = AsnConvert.parse(certDer, Certificate);
    const tbs = cert.tbsCertificate;
    const details: CertificateDetails = {
      subjectCN: attribute(tbs.subject, COMMON_NAME),
      uid: attribute(tbs.subject, UID),
      subjectEmail: attribute(tbs.subject, EMAIL_ADDRESS),
      emails: [],
      dnsNames: [],
      serial: normalizeSerial(hexOf(tbs.serialNumber)),
      isCa: false,
      unknownCritical: [],
    };
    for (const ext of tbs.extensions ?? []) {
      const value = ext.extnValue.buffer;
      switch (ext.extnID) {
        case id_ce_keyUsage:
          details.keyUsage = AsnConvert.parse(value, KeyUsage).toJSON();
          break;
        case id_ce_extKeyUsage:
          details.extKeyUsage = [...AsnConvert.parse(value, ExtendedKeyUsage)];
          break;
        case id_ce_subjectAltName:
          for (const n of AsnConvert.parse(value, SubjectAlternativeName)) {
            if (n.rfc822Name !== undefined) details.emails.push(n.rfc822Name);
            if (n.dNSName !== undefined) details.dnsNames.push(n.dNSName);
          }
          break;
        case id_ce_basicConstraints:
          details.isCa = AsnConvert.parse(value, BasicConstraints).cA;
          break;
        case id_ce_subjectKeyIdentifier:
          details.subjectKeyId = hexOf(AsnConvert.parse(value, SubjectKeyIdentifier).buffer);
          break;
        case id_ce_authorityKeyIdentifier: {
          const id = AsnConvert.parse(value, AuthorityKeyIdentifier).keyIdentifier;
          if (id) details.authorityKeyId = hexOf(id.buffer);
          break;
        }
      }
      if (ext.critical && !UNDERSTOOD.has(ext.extnID)) details.unknownCritical.push(ext.extnID);
    }
    return ok(details);
  } catch (cause) {
    return err("cert_malformed", "The certificate is not valid DER X.509.", {
      cause: cause instanceof Error ? cause.message : String(cause),
    });
  }
}
