import { createHash, generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { isIPv4, isIPv6 } from "node:net";
import { GwError } from "../errors.ts";
import * as der from "./der.ts";

export interface SelfSignedOptions {
  commonName: string;
  dnsNames?: string[];
  /** IPv4 or IPv6 literals (no zone id), written to subjectAltName as iPAddress. */
  ipAddresses?: string[];
  /** Validity in days from now (default 3650). */
  days?: number;
}

const OID = {
  commonName: "2.5.4.3",
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  basicConstraints: "2.5.29.19",
  keyUsage: "2.5.29.15",
  extKeyUsage: "2.5.29.37",
  subjectAltName: "2.5.29.17",
  subjectKeyIdentifier: "2.5.29.14",
  serverAuth: "1.3.6.1.5.5.7.3.1",
} as const;

/** Notbefore is backdated a little so clients with a slightly slow clock accept a fresh cert. */
const BACKDATE_MS = 5 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Creates an EC P-256 self-signed X.509 v3 server certificate (ecdsa-with-SHA256).
 * Throws GwError `cert_invalid_options` for an empty CN, a bad IP literal or bad `days`:
 * these are configuration bugs, not runtime conditions.
 */
export function createSelfSignedCertificate(options: SelfSignedOptions): {
  certPem: string;
  keyPem: string;
} {
  const { commonName, dnsNames = [], ipAddresses = [], days = 3650 } = options;
  if (commonName.length === 0) invalid("commonName must not be empty");
  if (!Number.isFinite(days) || days <= 0) invalid(`days must be positive, got ${days}`);
  for (const d of dnsNames) {
    if (!/^[\x21-\x7e]+$/.test(d)) invalid(`not a DNS name: ${JSON.stringify(d)}`);
  }

  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const spki = new Uint8Array(publicKey.export({ type: "spki", format: "der" }));
  const jwk = publicKey.export({ format: "jwk" });
  // RFC 5280 §4.2.1.2 method 1: SHA-1 of the subjectPublicKey bits (uncompressed point).
  const point = Buffer.concat([
    Buffer.of(4),
    Buffer.from(jwk.x!, "base64url"),
    Buffer.from(jwk.y!, "base64url"),
  ]);
  const keyId = new Uint8Array(createHash("sha1").update(point).digest());

  const serial = new Uint8Array(randomBytes(16));
  serial[0] = (serial[0] & 0x7f) | 0x01; // positive, and still 16 bytes once encoded

  const notBefore = new Date(Math.floor((Date.now() - BACKDATE_MS) / 1000) * 1000);
  const notAfter = new Date(notBefore.getTime() + Math.round(days * DAY_MS));
  const name = der.sequence(der.set(der.sequence(der.oid(OID.commonName), der.utf8String(commonName))));
  const sigAlg = der.sequence(der.oid(OID.ecdsaWithSha256));

  const altNames = [
    ...dnsNames.map((d) => der.implicit(2, der.ia5String(d))),
    ...ipAddresses.map((ip) => der.implicit(7, der.octetString(ipBytes(ip)))),
  ];
  const extensions = [
    extension(OID.basicConstraints, true, der.sequence()),
    // digitalSignature is bit 0; DER drops the 7 trailing zero bits.
    extension(OID.keyUsage, true, der.bitString(Uint8Array.of(0x80), 7)),
    extension(OID.extKeyUsage, false, der.sequence(der.oid(OID.serverAuth))),
    // An empty subjectAltName is invalid (RFC 5280 §4.2.1.6): omit it when there are no names.
    ...(altNames.length > 0 ? [extension(OID.subjectAltName, false, der.sequence(...altNames))] : []),
    extension(OID.subjectKeyIdentifier, false, der.octetString(keyId)),
  ];

  const tbs = der.sequence(
    der.explicit(0, der.smallInteger(2)), // v3
    der.integer(serial),
    sigAlg,
    name,
    der.sequence(der.time(notBefore), der.time(notAfter)),
    name,
    spki,
    der.explicit(3, der.sequence(...extensions)),
  );
  const signature = new Uint8Array(sign("sha256", tbs, privateKey));
  const cert = der.sequence(tbs, sigAlg, der.bitString(signature));

  return {
    certPem: toPem("CERTIFICATE", cert),
    keyPem: privateKey.export({ type: "pkcs8", format: "pem" }) as string,
  };
}

function extension(id: string, critical: boolean, value: Uint8Array): Uint8Array {
  // critical is DEFAULT FALSE, so DER omits it when false.
  return critical
    ? der.sequence(der.oid(id), der.boolean(true), der.octetString(value))
    : der.sequence(der.oid(id), der.octetString(value));
}

function toPem(label: string, body: Uint8Array): string {
  const lines = Buffer.from(body).toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

/** Network-order bytes of an IPv4 (4) or IPv6 (16) literal. */
function ipBytes(ip: string): Uint8Array {
  if (isIPv4(ip)) return Uint8Array.from(ip.split(".").map(Number));
  if (!isIPv6(ip) || ip.includes("%")) invalid(`not an IP address: ${JSON.stringify(ip)}`);
  let text = ip;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1].split(".").map(Number);
    text = text.slice(0, v4.index) + ((a << 8) | b).toString(16) + ":" + ((c << 8) | d).toString(16);
  }
  const [head, tail] = text.split("::");
  const groups = (s: string | undefined) => (s ? s.split(":").map((g) => parseInt(g, 16)) : []);
  const h = groups(head);
  const t = groups(tail);
  const words = tail === undefined ? h : [...h, ...new Array(8 - h.length - t.length).fill(0), ...t];
  const out = new Uint8Array(16);
  words.forEach((w, i) => {
    out[2 * i] = w >> 8;
    out[2 * i + 1] = w & 0xff;
  });
  return out;
}

function invalid(message: string): never {
  throw new GwError("cert_invalid_options", `Cannot create the self-signed certificate: ${message}.`);
}
