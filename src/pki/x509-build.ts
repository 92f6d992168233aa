/**
 * Building blocks shared by the CA, client-certificate and CRL writers: names, extensions,
 * key identifiers, serial numbers and signing with whatever key type the CA holds.
 */
import { X509Certificate, createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import { GwError } from "../errors.ts";
import * as der from "./der.ts";
import { readChildren, readTlv, slice } from "./der-read.ts";
import { parseCertificateDetails } from "./x509-parse.ts";

export const OID = {
  commonName: "2.5.4.3",
  uid: "0.9.2342.19200300.100.1.1",
  basicConstraints: "2.5.29.19",
  keyUsage: "2.5.29.15",
  extKeyUsage: "2.5.29.37",
  subjectAltName: "2.5.29.17",
  subjectKeyIdentifier: "2.5.29.14",
  authorityKeyIdentifier: "2.5.29.35",
  cRLNumber: "2.5.29.20",
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  ecdsaWithSha384: "1.2.840.10045.4.3.3",
  ecdsaWithSha512: "1.2.840.10045.4.3.4",
  sha256WithRsa: "1.2.840.113549.1.1.11",
  ed25519: "1.3.101.112",
} as const;

export const EXT_KEY_USAGE = {
  serverAuth: "1.3.6.1.5.5.7.3.1",
  clientAuth: "1.3.6.1.5.5.7.3.2",
  codeSigning: "1.3.6.1.5.5.7.3.3",
  emailProtection: "1.3.6.1.5.5.7.3.4",
  anyExtendedKeyUsage: "2.5.29.37.0",
} as const;
export type ExtKeyUsageName = keyof typeof EXT_KEY_USAGE;

/** RFC 5280 §4.2.1.3 bit positions. */
export const KEY_USAGE_BITS = {
  digitalSignature: 0,
  nonRepudiation: 1,
  keyEncipherment: 2,
  dataEncipherment: 3,
  keyAgreement: 4,
  keyCertSign: 5,
  cRLSign: 6,
  encipherOnly: 7,
  decipherOnly: 8,
} as const;
export type KeyUsageName = keyof typeof KEY_USAGE_BITS;

export type KeyAlgorithm = "ec-p256" | "rsa-2048";

export const DAY_MS = 24 * 60 * 60 * 1000;
/** notBefore is backdated so that clients with a slightly slow clock accept a fresh certificate. */
export const BACKDATE_MS = 5 * 60 * 1000;

export function invalidOptions(what: string, message: string): never {
  throw new GwError("pki_invalid_options", `Cannot create the ${what}: ${message}.`);
}

export function extension(id: string, critical: boolean, value: Uint8Array): Uint8Array {
  // critical is DEFAULT FALSE, so DER omits it when false.
  return critical
    ? der.sequence(der.oid(id), der.boolean(true), der.octetString(value))
    : der.sequence(der.oid(id), der.octetString(value));
}

/** A distinguished name: CN first, then UID (how ocserv's users expect "CN=alice, UID=alice"). */
export function distinguishedName(commonName: string, uid?: string): Uint8Array {
  const rdn = (type: string, value: string) => der.set(der.sequence(der.oid(type), der.utf8String(value)));
  return der.sequence(rdn(OID.commonName, commonName), ...(uid === undefined ? [] : [rdn(OID.uid, uid)]));
}

/** KeyUsage BIT STRING in DER form: trailing zero bits dropped and counted as unused. */
export function keyUsageBits(names: readonly KeyUsageName[]): Uint8Array {
  const highest = Math.max(...names.map((n) => KEY_USAGE_BITS[n]));
  const bytes = new Uint8Array(Math.floor(highest / 8) + 1);
  for (const n of names) bytes[KEY_USAGE_BITS[n] >> 3] |= 0x80 >> (KEY_USAGE_BITS[n] & 7);
  return der.bitString(bytes, 7 - (highest & 7));
}

export function extKeyUsageValue(names: readonly (ExtKeyUsageName | string)[]): Uint8Array {
  return der.sequence(...names.map((n) => der.oid(n in EXT_KEY_USAGE ? EXT_KEY_USAGE[n as ExtKeyUsageName] : n)));
}

/** 16 random bytes, positive and without a leading zero byte (RFC 5280: at most 20 octets). */
export function newSerial(): Uint8Array {
  const serial = new Uint8Array(randomBytes(16));
  serial[0] = (serial[0] & 0x7f) | 0x01;
  return serial;
}

/** RFC 5280 §4.2.1.2 method 1: SHA-1 of the subjectPublicKey BIT STRING contents. */
export function keyIdentifier(publicKey: KeyObject): Uint8Array {
  const spki = new Uint8Array(publicKey.export({ type: "spki", format: "der" }));
  const outer = readTlv(spki, 0)!;
  const bits = readChildren(spki, outer)![1];
  return new Uint8Array(createHash("sha1").update(spki.subarray(bits.contentStart + 1, bits.end)).digest());
}

export function generateKey(algorithm: KeyAlgorithm = "ec-p256"): { publicKey: KeyObject; privateKey: KeyObject } {
  return algorithm === "rsa-2048"
    ? generateKeyPairSync("rsa", { modulusLength: 2048 })
    : generateKeyPairSync("ec", { namedCurve: "prime256v1" });
}

export const spkiDer = (publicKey: KeyObject): Uint8Array =>
  new Uint8Array(publicKey.export({ type: "spki", format: "der" }));

/** The signature AlgorithmIdentifier and hash for a signing key. */
function signatureAlgorithm(key: KeyObject): { id: Uint8Array; hash: string | null } {
  switch (key.asymmetricKeyType) {
    case "ec": {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === "secp384r1") return { id: der.sequence(der.oid(OID.ecdsaWithSha384)), hash: "sha384" };
      if (curve === "secp521r1") return { id: der.sequence(der.oid(OID.ecdsaWithSha512)), hash: "sha512" };
      return { id: der.sequence(der.oid(OID.ecdsaWithSha256)), hash: "sha256" };
    }
    case "rsa":
      return { id: der.sequence(der.oid(OID.sha256WithRsa), der.nullValue()), hash: "sha256" };
    case "ed25519":
      return { id: der.sequence(der.oid(OID.ed25519)), hash: null };
    default:
      throw new GwError(
        "pki_unsupported_key",
        `The CA key is of type ${key.asymmetricKeyType}; use an EC (P-256/384/521), RSA or Ed25519 key.`,
      );
  }
}

/**
 * Signs a TBS structure: `build` receives the signature AlgorithmIdentifier (which the TBS
 * repeats inside itself) and returns the TBS DER; the result is SEQUENCE { tbs, alg, signature }.
 */
export function signed(key: KeyObject, build: (algorithm: Uint8Array) => Uint8Array): Uint8Array {
  const { id, hash } = signatureAlgorithm(key);
  const tbs = build(id);
  return der.sequence(tbs, id, der.bitString(new Uint8Array(sign(hash, tbs, key))));
}

export function toPem(label: string, body: Uint8Array): string {
  const lines = Buffer.from(body).toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

/** Every block with this label in a PEM text, decoded. */
export function pemBlocks(text: string, label: string): Uint8Array[] {
  const re = new RegExp(`-----BEGIN ${label}-----([\\s\\S]*?)-----END ${label}-----`, "g");
  return [...text.matchAll(re)].map((m) => new Uint8Array(Buffer.from(m[1].replace(/\s+/g, ""), "base64")));
}

/** A CA as the issuing helpers take it: its certificate and private key in PEM. */
export interface CaPair {
  certPem: string;
  keyPem: string;
}

/** What issuing needs from a CA: its exact subject bytes, key identifier and private key. */
export interface LoadedCa {
  cert: X509Certificate;
  subject: Uint8Array;
  keyId: Uint8Array;
  key: KeyObject;
}

export function loadCa(ca: CaPair, what: string): LoadedCa {
  let cert: X509Certificate;
  let key: KeyObject;
  try {
    cert = new X509Certificate(ca.certPem);
  } catch {
    invalidOptions(what, "the CA certificate is not a readable PEM certificate");
  }
  try {
    key = createPrivateKey(ca.keyPem);
  } catch {
    invalidOptions(what, "the CA private key is not a readable, unencrypted PEM key");
  }
  if (!cert.checkPrivateKey(key)) invalidOptions(what, "the CA private key does not belong to the CA certificate");
  if (!cert.ca) invalidOptions(what, `${cert.subject} is not a CA certificate (basicConstraints CA:TRUE)`);
  // TBSCertificate: [0] version, serial, signature, issuer, validity, subject, ...
  const raw = new Uint8Array(cert.raw);
  const tbs = readChildren(raw, readTlv(raw, 0)!)![0];
  const fields = readChildren(raw, tbs)!;
  const subject = slice(raw, fields[fields[0].tag === 0xa0 ? 5 : 4]);
  // Reuse the CA's own subjectKeyIdentifier when it has one: an imported CA may use another method.
  const details = parseCertificateDetails(raw);
  const ski = details.ok ? details.value.subjectKeyId : undefined;
  const keyId = ski ? new Uint8Array(Buffer.from(ski, "hex")) : keyIdentifier(cert.publicKey);
  return { cert, subject, keyId, key };
}
