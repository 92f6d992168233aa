/**
 * Client-certificate authentication (docs/protocol.md 3, spec "Certificate"): the chain the client
 * sent in the TLS handshake must lead to a configured CA, be within its dates, not be revoked,
 * and the leaf must allow digitalSignature and clientAuth. The handshake itself accepts any
 * certificate (rejectUnauthorized: false) so that password fallback and clear errors stay possible.
 */
import { X509Certificate } from "node:crypto";
import { err, ok, type Result } from "../errors.ts";
import { loadClientCertTrust, oneLine, type ClientCertTrust } from "./client-cert-trust.ts";
import { normalizeSerial, parseCertificateDetails } from "./x509-parse.ts";

export interface ClientCertificateInfo {
  subjectCN?: string;
  /** subjectAltName rfc822Name entries. */
  emails: string[];
  /** emailAddress attribute of the subject DN, if any. */
  subjectEmail?: string;
  uid?: string;
  dnsNames: string[];
  /** Upper-case hex of whole bytes, no leading zero bytes (as X509Certificate.serialNumber). */
  serial: string;
  /** Subject and issuer DNs on one line, for logs and the audit trail. */
  subject: string;
  issuer: string;
  notAfter: Date;
}

const CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
/** Longest chain followed: leaf, a few intermediates, a trust anchor. */
const MAX_DEPTH = 6;

/** What node:tls getPeerCertificate(true) returns, as far as we need it. */
export interface PeerCertificateLike {
  raw?: Uint8Array;
  issuerCertificate?: PeerCertificateLike;
}

/**
 * The DER chain from getPeerCertificate(true), leaf first. Stops at a certificate that is its own
 * issuer (node links a self-signed root to itself) and at an empty object (no certificate).
 */
export function chainFromPeerCertificate(peer: PeerCertificateLike | undefined): Uint8Array[] {
  const chain: Uint8Array[] = [];
  const seen = new Set<PeerCertificateLike>();
  for (let c = peer; c?.raw && c.raw.length > 0 && !seen.has(c); c = c.issuerCertificate) {
    seen.add(c);
    chain.push(new Uint8Array(c.raw));
  }
  return chain;
}

/**
 * Verifies a client certificate chain (DER, leaf first; extra certificates are untrusted
 * intermediates) against the CA bundle and CRLs, at time `at`.
 * Error codes: cert_missing, cert_malformed, cert_untrusted, cert_expired, cert_not_yet_valid,
 * cert_revoked, cert_crl_expired, cert_no_digital_signature, cert_no_client_auth, and those of
 * loadClientCertTrust when PEMs are passed instead of a loaded trust.
 */
export function verifyClientCertificate(
  chain: readonly Uint8Array[],
  trust: ClientCertTrust | { caPem: string; crlPem?: string },
  at: Date = new Date(),
): Result<ClientCertificateInfo> {
  if ("caPem" in trust) {
    const loaded = loadClientCertTrust(trust.caPem, trust.crlPem);
    if (!loaded.ok) return loaded;
    trust = loaded.value;
  }
  if (chain.length === 0) {
    return err(
      "cert_missing",
      "The client presented no certificate. Configure one in the client (openconnect " +
        "--certificate user.p12), or allow password login for this group.",
    );
  }
  const certs: X509Certificate[] = [];
  for (const der of chain) {
    try {
      certs.push(new X509Certificate(der));
    } catch {
      return malformed();
    }
  }
  const leaf = certs[0];
  const details = parseCertificateDetails(chain[0]);
  if (!details.ok) return malformed();
  const d = details.value;
  const who = `The client certificate ${describe(leaf)}`;

  const path = buildPath(leaf, certs.slice(1), trust.anchors);
  if (!path) {
    return err(
      "cert_untrusted",
      `${who} issued by "${oneLine(leaf.issuer)}" does not chain to a configured client CA. ` +
        "Issue the user a certificate from the gateway's CA (`gw pki client issue`), or add the issuing " +
        "CA to the client CA bundle.",
    );
  }

  for (const cert of path) {
    const subject = cert === leaf ? who : `The CA certificate ${describe(cert)} in its chain`;
    const notBefore = cert.validFromDate ?? new Date(cert.validFrom);
    const notAfter = cert.validToDate ?? new Date(cert.validTo);
    if (at < notBefore) {
      return err(
        "cert_not_yet_valid",
        `${subject} is not valid before ${notBefore.toISOString()}. Check the gateway's clock, ` +
          "or wait until then.",
      );
    }
    if (at > notAfter) {
      return err(
        "cert_expired",
        `${subject} expired on ${notAfter.toISOString()}. Issue a new certificate ` +
          `(\`gw pki client issue\`) and install it in the client.`,
      );
    }
  }

  // Revocation: each certificate below the anchor against a CRL from its issuer, when one is configured.
  for (let i = 0; i < path.length - 1; i++) {
    const cert = path[i];
    const crl = trust.crls.find((c) => c.issuer === path[i + 1] || c.issuer.raw.equals(path[i + 1].raw));
    if (!crl) continue;
    if (crl.nextUpdate && at > crl.nextUpdate) {
      return err(
        "cert_crl_expired",
        `The CRL of "${oneLine(crl.issuer.subject)}" expired on ${crl.nextUpdate.toISOString()}, so ` +
          "no certificate of that CA is accepted. Publish a fresh CRL (`gw pki crl`) and restart the gateway with it.",
      );
    }
    const serial = cert === leaf ? d.serial : serialOf(cert);
    const revokedAt = crl.revoked.get(serial);
    if (revokedAt) {
      return err(
        "cert_revoked",
        `${cert === leaf ? who : `The CA certificate ${describe(cert)}`} was revoked on ` +
          `${revokedAt.toISOString()} (CRL of "${oneLine(crl.issuer.subject)}"). Issue the user a new ` +
          "certificate if access should continue.",
      );
    }
  }

  if (d.unknownCritical.length > 0) {
    return err(
      "cert_malformed",
      `${who} has critical extensions the gateway does not understand (${d.unknownCritical.join(", ")}); ` +
        "issue a certificate without them.",
    );
  }
  if (d.keyUsage && !d.keyUsage.includes("digitalSignature")) {
    return err(
      "cert_no_digital_signature",
      `${who} has a key usage without digitalSignature (${d.keyUsage.join(", ") || "none"}), so it ` +
        "cannot sign the TLS handshake. Issue a client certificate with keyUsage digitalSignature.",
    );
  }
  if (!d.extKeyUsage?.includes(CLIENT_AUTH)) {
    return err(
      "cert_no_client_auth",
      `${who} is not for TLS client authentication: its extended key usage ` +
        `${d.extKeyUsage ? `(${d.extKeyUsage.join(", ")})` : "is missing"} lacks clientAuth ` +
        "(1.3.6.1.5.5.7.3.2). Issue a client certificate (`gw pki client issue` sets it).",
    );
  }

  return ok({
    subjectCN: d.subjectCN,
    emails: d.emails,
    subjectEmail: d.subjectEmail,
    uid: d.uid,
    dnsNames: d.dnsNames,
    serial: d.serial,
    subject: oneLine(leaf.subject),
    issuer: oneLine(leaf.issuer),
    notAfter: leaf.validToDate ?? new Date(leaf.validTo),
  });
}

/**
 * The path from the leaf to a trust anchor (both included), using the client-sent
 * intermediates where needed, or undefined. Intermediates must be CAs; every link's
 * signature is verified.
 */
function buildPath(
  leaf: X509Certificate,
  intermediates: X509Certificate[],
  anchors: X509Certificate[],
): X509Certificate[] | undefined {
  const path = [leaf];
  for (let current = leaf; path.length <= MAX_DEPTH; ) {
    const anchor = anchors.find((a) => issued(a, current));
    if (anchor) return anchor.raw.equals(current.raw) ? path : [...path, anchor];
    const next = intermediates.find((c) => c.ca && !path.includes(c) && issued(c, current));
    if (!next) return undefined;
    path.push(next);
    current = next;
  }
  return undefined;
}

function issued(issuer: X509Certificate, cert: X509Certificate): boolean {
  try {
    return cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

function serialOf(cert: X509Certificate): string {
  return normalizeSerial(cert.serialNumber);
}

function describe(cert: X509Certificate): string {
  return `"${oneLine(cert.subject)}" (serial ${serialOf(cert)})`;
}

function malformed(): Result<never> {
  return err(
    "cert_malformed",
    "The client sent a certificate that is not valid X.509. Re-issue the user's certificate " +
      "(`gw pki client issue`) and re-import it in the client.",
  );
}

export type CertUserAttribute = "cn" | "email" | "uid" | "san-email";

/**
 * Whether the verified certificate names this user (ocserv's cert-user-oid):
 * "cn" subject CN, "uid" subject UID — both exact; "email" the subject DN emailAddress,
 * "san-email" any subjectAltName rfc822Name — both case-insensitive (mail systems treat
 * addresses so in practice).
 */
export function certificateMatchesUser(
  info: ClientCertificateInfo,
  username: string,
  attribute: CertUserAttribute,
): boolean {
  const sameMail = (a: string | undefined) => a !== undefined && a.toLowerCase() === username.toLowerCase();
  switch (attribute) {
    case "cn":
      return info.subjectCN === username;
    case "uid":
      return info.uid === username;
    case "email":
      return sameMail(info.subjectEmail);
    case "san-email":
      return info.emails.some(sameMail);
  }
}
