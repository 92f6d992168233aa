/**
 * The gateway's client-certificate trust: the configured CA bundle and optional CRLs, parsed
 * and checked once (at startup or reload) so a handshake only does lookups and signature checks.
 */
import { X509Certificate, verify } from "node:crypto";
import { AsnConvert } from "@peculiar/asn1-schema";
import { CertificateList } from "@peculiar/asn1-x509";
import { err, ok, type Result } from "../errors.ts";
import { pemBlocks } from "./x509-build.ts";
import { normalizeSerial } from "./x509-parse.ts";

export interface TrustedCrl {
  /** The configured CA that signed this CRL. */
  issuer: X509Certificate;
  thisUpdate: Date;
  nextUpdate?: Date;
  /** Normalised serial (normalizeSerial) → revocation date. */
  revoked: Map<string, Date>;
}

export interface ClientCertTrust {
  anchors: X509Certificate[];
  crls: TrustedCrl[];
  /** The PEM text it was loaded from (a session worker loads the same trust from it). */
  source: ClientCertTrustSource;
}

export interface ClientCertTrustSource {
  caPem: string;
  crlPem?: string;
}

/** Signature algorithm OID → hash for node:crypto verify (null: the key type implies it). */
const SIGNATURE_HASH: Record<string, string | null> = {
  "1.2.840.10045.4.3.2": "sha256",
  "1.2.840.10045.4.3.3": "sha384",
  "1.2.840.10045.4.3.4": "sha512",
  "1.2.840.113549.1.1.11": "sha256",
  "1.2.840.113549.1.1.12": "sha384",
  "1.2.840.113549.1.1.13": "sha512",
  "1.3.101.112": null,
};

/**
 * Parses the client CA bundle (one or more PEM certificates) and optional CRL PEM (one or more
 * "X509 CRL" blocks). Error codes: `client_ca_invalid` (no readable CA certificate, or one that
 * is not a CA), `crl_invalid` (unreadable, or signed with an unsupported algorithm),
 * `crl_untrusted` (not signed by any certificate in the CA bundle).
 */
export function loadClientCertTrust(caPem: string, crlPem?: string): Result<ClientCertTrust> {
  const anchors: X509Certificate[] = [];
  const blocks = pemBlocks(caPem, "CERTIFICATE");
  if (blocks.length === 0) {
    return err(
      "client_ca_invalid",
      "The client CA file holds no PEM certificate ('-----BEGIN CERTIFICATE-----'). Point it at " +
        "the CA that issues user certificates (create one with `gw pki ca create`).",
    );
  }
  for (const [i, block] of blocks.entries()) {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(block);
    } catch {
      return err("client_ca_invalid", `Certificate ${i + 1} in the client CA file does not parse; replace the file.`);
    }
    if (!cert.ca) {
      return err(
        "client_ca_invalid",
        `Certificate ${i + 1} in the client CA file (${oneLine(cert.subject)}) is not a CA ` +
          "(basicConstraints CA:TRUE); put only CA certificates in the bundle.",
      );
    }
    anchors.push(cert);
  }

  const crls: TrustedCrl[] = [];
  if (crlPem !== undefined) {
    const crlBlocks = pemBlocks(crlPem, "X509 CRL");
    if (crlBlocks.length === 0) {
      return err(
        "crl_invalid",
        "The CRL file holds no PEM CRL ('-----BEGIN X509 CRL-----'). Create one with `gw pki crl`, " +
          "or convert a DER CRL with `openssl crl -inform DER -in crl.der -out crl.pem`.",
      );
    }
    for (const [i, block] of crlBlocks.entries()) {
      const crl = parseCrl(block, anchors, i + 1);
      if (!crl.ok) return crl;
      crls.push(crl.value);
    }
  }
  return ok({ anchors, crls, source: { caPem, ...(crlPem !== undefined && { crlPem }) } });
}

function parseCrl(block: Uint8Array, anchors: X509Certificate[], index: number): Result<TrustedCrl> {
  let list: CertificateList;
  try {
    list = AsnConvert.parse(block, CertificateList);
  } catch {
    return err("crl_invalid", `CRL ${index} in the CRL file does not parse; replace the file.`);
  }
  const hash = SIGNATURE_HASH[list.signatureAlgorithm.algorithm];
  if (hash === undefined || !list.tbsCertListRaw) {
    return err(
      "crl_invalid",
      `CRL ${index} is signed with algorithm ${list.signatureAlgorithm.algorithm}, which the gateway ` +
        "does not check; sign CRLs with ECDSA, RSA PKCS#1 v1.5 (SHA-256 or better) or Ed25519.",
    );
  }
  const tbs = new Uint8Array(list.tbsCertListRaw);
  const signature = new Uint8Array(list.signature);
  const issuer = anchors.find((ca) => {
    try {
      return verify(hash, tbs, ca.publicKey, signature);
    } catch {
      return false;
    }
  });
  if (!issuer) {
    return err(
      "crl_untrusted",
      `CRL ${index} is not signed by any certificate in the client CA file; use the CRL of that CA ` +
        "(`gw pki crl` signs with the CA key), or add its CA to the bundle.",
    );
  }
  const t = list.tbsCertList;
  const revoked = new Map<string, Date>();
  for (const entry of t.revokedCertificates ?? []) {
    revoked.set(normalizeSerial(Buffer.from(entry.userCertificate).toString("hex")), entry.revocationDate.getTime());
  }
  return ok({ issuer, thisUpdate: t.thisUpdate.getTime(), nextUpdate: t.nextUpdate?.getTime(), revoked });
}

/** node:crypto prints DNs one attribute per line; logs and messages want one line. */
export const oneLine = (dn: string): string => dn.split("\n").join(", ");
