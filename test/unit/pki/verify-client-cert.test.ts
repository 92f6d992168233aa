import { describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import type { AddressInfo } from "node:net";
import * as tls from "node:tls";
import { createCertificateAuthority } from "../../../src/pki/ca.ts";
import { loadClientCertTrust } from "../../../src/pki/client-cert-trust.ts";
import { issueClientCertificate } from "../../../src/pki/client-cert.ts";
import { createCrl } from "../../../src/pki/crl.ts";
import { createSelfSignedCertificate } from "../../../src/pki/self-signed.ts";
import {
  certificateMatchesUser,
  chainFromPeerCertificate,
  verifyClientCertificate,
  type ClientCertificateInfo,
} from "../../../src/pki/verify-client-cert.ts";
import type { Result } from "../../../src/errors.ts";

const DAY_MS = 86_400_000;
const ca = createCertificateAuthority({ commonName: "gw client CA" });
const otherCa = createCertificateAuthority({ commonName: "gw client CA" }); // same name, other key
const derOf = (pem: string) => new Uint8Array(new X509Certificate(pem).raw);
const issue = (o: Partial<Parameters<typeof issueClientCertificate>[0]> = {}) =>
  issueClientCertificate({ ca, commonName: "alice", days: 30, ...o });

function errorCode<T>(r: Result<T>): string | undefined {
  return r.ok ? undefined : r.error.code;
}

describe("verifyClientCertificate", () => {
  const alice = issue({ email: "Alice@Example.com", uid: "alice7" });
  const trust = { caPem: ca.certPem };

  test("a certificate from the configured CA passes and reports its names", () => {
    const r = verifyClientCertificate([derOf(alice.certPem)], trust);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value).toMatchObject({
      subjectCN: "alice",
      uid: "alice7",
      emails: ["Alice@Example.com"],
      dnsNames: [],
      serial: alice.serial,
      subject: "CN=alice, UID=alice7",
      issuer: "CN=gw client CA",
    });
    expect(r.value.notAfter.getTime()).toBeGreaterThan(Date.now() + 29 * DAY_MS);
  });

  test("a certificate from another CA (same CA name, other key) is cert_untrusted", () => {
    const foreign = issueClientCertificate({ ca: otherCa, commonName: "alice", days: 30 });
    const r = verifyClientCertificate([derOf(foreign.certPem)], trust);
    expect(errorCode(r)).toBe("cert_untrusted");
    if (!r.ok) expect(r.error.message).toContain("gw pki client issue");
    // Sending the other CA along as an "intermediate" does not help: it is not trusted.
    expect(errorCode(verifyClientCertificate([derOf(foreign.certPem), derOf(otherCa.certPem)], trust))).toBe(
      "cert_untrusted",
    );
    // A self-signed (non-CA) certificate neither.
    const self = createSelfSignedCertificate({ commonName: "alice" });
    expect(errorCode(verifyClientCertificate([derOf(self.certPem)], trust))).toBe("cert_untrusted");
  });

  test("validity dates: expired and not yet valid, judged at the given time", () => {
    const expired = issue({ notBefore: new Date(Date.now() - 10 * DAY_MS), days: 1 });
    const r = verifyClientCertificate([derOf(expired.certPem)], trust);
    expect(errorCode(r)).toBe("cert_expired");
    if (!r.ok) expect(r.error.message).toMatch(/expired on \d{4}-.*gw pki client issue/);
    const future = issue({ notBefore: new Date(Date.now() + 2 * DAY_MS), days: 10 });
    expect(errorCode(verifyClientCertificate([derOf(future.certPem)], trust))).toBe("cert_not_yet_valid");
    expect(verifyClientCertificate([derOf(future.certPem)], trust, new Date(Date.now() + 3 * DAY_MS)).ok).toBe(true);
    expect(errorCode(verifyClientCertificate([derOf(alice.certPem)], trust, new Date(Date.now() + 31 * DAY_MS)))).toBe(
      "cert_expired",
    );
  });

  test("an expired CA makes its certificates cert_expired", () => {
    const oldCa = createCertificateAuthority({ commonName: "old CA", notBefore: new Date(Date.now() - 20 * DAY_MS), days: 30 });
    const c = issueClientCertificate({ ca: oldCa, commonName: "bob", days: 365 });
    const at = new Date(Date.now() + 15 * DAY_MS);
    const r = verifyClientCertificate([derOf(c.certPem)], { caPem: oldCa.certPem }, at);
    expect(errorCode(r)).toBe("cert_expired");
    if (!r.ok) expect(r.error.message).toContain('CA certificate "CN=old CA"');
  });

  test("a certificate revoked in the CRL is cert_revoked; others of the CA still pass", () => {
    const revoked = issue({ commonName: "mallory" });
    const crlPem = createCrl({
      ca,
      revoked: [{ serial: revoked.serial, date: new Date(Date.now() - 60_000) }],
      nextUpdateDays: 7,
    });
    const withCrl = { caPem: ca.certPem, crlPem };
    const r = verifyClientCertificate([derOf(revoked.certPem)], withCrl);
    expect(errorCode(r)).toBe("cert_revoked");
    if (!r.ok) expect(r.error.message).toContain("was revoked on");
    expect(verifyClientCertificate([derOf(alice.certPem)], withCrl).ok).toBe(true);
    // An empty CRL revokes nothing.
    const empty = { caPem: ca.certPem, crlPem: createCrl({ ca, revoked: [], nextUpdateDays: 7 }) };
    expect(verifyClientCertificate([derOf(revoked.certPem)], empty).ok).toBe(true);
  });

  test("a CRL past its nextUpdate refuses every certificate of its CA (fail closed)", () => {
    const crlPem = createCrl({ ca, revoked: [], nextUpdateDays: 1, thisUpdate: new Date(Date.now() - 3 * DAY_MS) });
    const r = verifyClientCertificate([derOf(alice.certPem)], { caPem: ca.certPem, crlPem });
    expect(errorCode(r)).toBe("cert_crl_expired");
    // A CA without a CRL is unaffected by another CA's CRL.
    const other = issueClientCertificate({ ca: otherCa, commonName: "carol", days: 30 });
    const bundle = { caPem: ca.certPem + otherCa.certPem, crlPem };
    expect(verifyClientCertificate([derOf(other.certPem)], bundle).ok).toBe(true);
  });

  test("key usage without digitalSignature is cert_no_digital_signature; no key usage at all is fine", () => {
    const noSig = issue({ keyUsage: ["keyEncipherment"] });
    const r = verifyClientCertificate([derOf(noSig.certPem)], trust);
    expect(errorCode(r)).toBe("cert_no_digital_signature");
    if (!r.ok) expect(r.error.message).toContain("keyEncipherment");
    expect(verifyClientCertificate([derOf(issue({ keyUsage: [] }).certPem)], trust).ok).toBe(true);
    expect(
      verifyClientCertificate([derOf(issue({ keyUsage: ["digitalSignature", "keyEncipherment"] }).certPem)], trust).ok,
    ).toBe(true);
  });

  test("no clientAuth in the EKU, or no EKU at all, is cert_no_client_auth", () => {
    const server = issue({ extKeyUsage: ["serverAuth"] });
    const r = verifyClientCertificate([derOf(server.certPem)], trust);
    expect(errorCode(r)).toBe("cert_no_client_auth");
    if (!r.ok) expect(r.error.message).toContain("1.3.6.1.5.5.7.3.1");
    expect(errorCode(verifyClientCertificate([derOf(issue({ extKeyUsage: [] }).certPem)], trust))).toBe(
      "cert_no_client_auth",
    );
    expect(verifyClientCertificate([derOf(issue({ extKeyUsage: ["serverAuth", "clientAuth"] }).certPem)], trust).ok).toBe(
      true,
    );
  });

  test("garbage is cert_malformed, nothing is cert_missing, a tampered signature is cert_untrusted", () => {
    expect(errorCode(verifyClientCertificate([Uint8Array.of(0x30, 0x03, 1, 2, 3)], trust))).toBe("cert_malformed");
    expect(errorCode(verifyClientCertificate([], trust))).toBe("cert_missing");
    const der = derOf(alice.certPem);
    const tampered = Uint8Array.from(der);
    tampered[tampered.length - 5] ^= 0x01; // inside the signature
    expect(errorCode(verifyClientCertificate([tampered], trust))).toBe("cert_untrusted");
  });

  test("an intermediate sent by the client is followed to the trusted root", () => {
    const sub = createCertificateAuthority({ commonName: "gw sub CA", issuer: ca, days: 365 });
    const leaf = issueClientCertificate({ ca: sub, commonName: "dave", days: 1 });
    expect(verifyClientCertificate([derOf(leaf.certPem), derOf(sub.certPem)], trust).ok).toBe(true);
    // Without the intermediate there is no path.
    expect(errorCode(verifyClientCertificate([derOf(leaf.certPem)], trust))).toBe("cert_untrusted");
    // The root's CRL revoking the intermediate refuses everything below it.
    const crlPem = createCrl({ ca, revoked: [{ serial: new X509Certificate(sub.certPem).serialNumber, date: new Date() }], nextUpdateDays: 1 });
    const r = verifyClientCertificate([derOf(leaf.certPem), derOf(sub.certPem)], { caPem: ca.certPem, crlPem });
    expect(errorCode(r)).toBe("cert_revoked");
    if (!r.ok) expect(r.error.message).toContain('CA certificate "CN=gw sub CA"');
    // A client-sent certificate that is not a CA is never used as an intermediate.
    const notCa = issue({ commonName: "not a ca" });
    const fake = issueClientCertificate({ ca: otherCa, commonName: "x", days: 1 });
    expect(errorCode(verifyClientCertificate([derOf(fake.certPem), derOf(notCa.certPem)], trust))).toBe("cert_untrusted");
  });

  test("the CA bundle and CRL are checked when loaded", () => {
    expect(errorCode(loadClientCertTrust("not a pem"))).toBe("client_ca_invalid");
    expect(errorCode(loadClientCertTrust(alice.certPem))).toBe("client_ca_invalid"); // not a CA
    expect(errorCode(loadClientCertTrust(ca.certPem, "nothing"))).toBe("crl_invalid");
    expect(errorCode(loadClientCertTrust(ca.certPem, "-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----\n"))).toBe(
      "crl_invalid",
    );
    const foreignCrl = createCrl({ ca: otherCa, revoked: [], nextUpdateDays: 1 });
    expect(errorCode(loadClientCertTrust(ca.certPem, foreignCrl))).toBe("crl_untrusted");
    expect(errorCode(verifyClientCertificate([derOf(alice.certPem)], { caPem: ca.certPem, crlPem: foreignCrl }))).toBe(
      "crl_untrusted",
    );
    const loaded = loadClientCertTrust(ca.certPem + otherCa.certPem, createCrl({ ca, revoked: [], nextUpdateDays: 1 }));
    expect(loaded.ok && loaded.value.anchors.length).toBe(2);
    if (loaded.ok) expect(verifyClientCertificate([derOf(alice.certPem)], loaded.value).ok).toBe(true);
  });

  test("RSA client keys and an RSA CA work the same way", () => {
    const rsaCa = createCertificateAuthority({ commonName: "rsa CA", keyAlgorithm: "rsa-2048" });
    const c = issueClientCertificate({ ca: rsaCa, commonName: "rsa-user", days: 1, keyAlgorithm: "rsa-2048" });
    const crlPem = createCrl({ ca: rsaCa, revoked: [{ serial: c.serial, date: new Date() }], nextUpdateDays: 1 });
    expect(verifyClientCertificate([derOf(c.certPem)], { caPem: rsaCa.certPem }).ok).toBe(true);
    expect(errorCode(verifyClientCertificate([derOf(c.certPem)], { caPem: rsaCa.certPem, crlPem }))).toBe("cert_revoked");
  });
});

describe("certificateMatchesUser", () => {
  const info: ClientCertificateInfo = {
    subjectCN: "alice",
    uid: "a.smith",
    subjectEmail: "alice@corp.example",
    emails: ["Alice.Smith@Example.com", "alice@example.org"],
    dnsNames: [],
    serial: "01",
    subject: "CN=alice",
    issuer: "CN=ca",
    notAfter: new Date(),
  };
  test("each attribute", () => {
    expect(certificateMatchesUser(info, "alice", "cn")).toBe(true);
    expect(certificateMatchesUser(info, "Alice", "cn")).toBe(false);
    expect(certificateMatchesUser(info, "bob", "cn")).toBe(false);
    expect(certificateMatchesUser(info, "a.smith", "uid")).toBe(true);
    expect(certificateMatchesUser(info, "alice", "uid")).toBe(false);
    expect(certificateMatchesUser(info, "ALICE@corp.example", "email")).toBe(true);
    expect(certificateMatchesUser(info, "alice@example.org", "email")).toBe(false);
    expect(certificateMatchesUser(info, "alice.smith@example.com", "san-email")).toBe(true);
    expect(certificateMatchesUser(info, "alice@example.org", "san-email")).toBe(true);
    expect(certificateMatchesUser(info, "alice@corp.example", "san-email")).toBe(false);
    const bare = { ...info, subjectCN: undefined, uid: undefined, subjectEmail: undefined, emails: [] };
    for (const a of ["cn", "uid", "email", "san-email"] as const) expect(certificateMatchesUser(bare, "", a)).toBe(false);
  });
});

describe("a real TLS handshake on 127.0.0.1", () => {
  const server = createSelfSignedCertificate({ commonName: "gw.test", ipAddresses: ["127.0.0.1"] });

  /** Starts a server that requests a certificate on every handshake and reports what it saw. */
  async function handshake(client: { certPem?: string; keyPem?: string; caPem?: string }, maxVersion?: tls.SecureVersion) {
    const seen = Promise.withResolvers<tls.DetailedPeerCertificate>();
    const srv = tls.createServer(
      { cert: server.certPem, key: server.keyPem, requestCert: true, rejectUnauthorized: false, maxVersion },
      (socket) => {
        seen.resolve(socket.getPeerCertificate(true));
        socket.end("bye\n");
      },
    );
    await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
    const { port } = srv.address() as AddressInfo;
    try {
      const sock = tls.connect({
        host: "127.0.0.1",
        port,
        cert: client.caPem && client.certPem ? client.certPem + client.caPem : client.certPem,
        key: client.keyPem,
        rejectUnauthorized: false,
      });
      sock.on("error", () => {});
      sock.on("data", () => sock.end());
      const peer = await Promise.race([
        seen.promise,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error("handshake timed out")), 5_000)),
      ]);
      sock.destroy();
      return peer;
    } finally {
      srv.close();
    }
  }

  for (const maxVersion of ["TLSv1.3", "TLSv1.2"] as const) {
    test(`${maxVersion}: the presented certificate passes through verifyClientCertificate`, async () => {
      const alice = issue({ commonName: "alice", email: "alice@example.com" });
      const peer = await handshake(alice, maxVersion);
      const chain = chainFromPeerCertificate(peer);
      expect(chain.length).toBeGreaterThanOrEqual(1);
      expect(chain[0]).toEqual(derOf(alice.certPem));
      const r = verifyClientCertificate(chain, { caPem: ca.certPem });
      expect(r.ok).toBe(true);
      if (r.ok) {
        expect(certificateMatchesUser(r.value, "alice", "cn")).toBe(true);
        expect(certificateMatchesUser(r.value, "alice@example.com", "san-email")).toBe(true);
      }
    });
  }

  test("the chain with the CA appended still verifies; an untrusted or no certificate fails", async () => {
    const alice = issue();
    const withCa = chainFromPeerCertificate(await handshake({ ...alice, caPem: ca.certPem }));
    expect(verifyClientCertificate(withCa, { caPem: ca.certPem }).ok).toBe(true);

    const foreign = issueClientCertificate({ ca: otherCa, commonName: "alice", days: 1 });
    const foreignChain = chainFromPeerCertificate(await handshake(foreign));
    expect(errorCode(verifyClientCertificate(foreignChain, { caPem: ca.certPem }))).toBe("cert_untrusted");

    const none = chainFromPeerCertificate(await handshake({}));
    expect(none).toEqual([]);
    expect(errorCode(verifyClientCertificate(none, { caPem: ca.certPem }))).toBe("cert_missing");
  });
});

test("chainFromPeerCertificate stops at a self-issued link and at an empty object", () => {
  const root: { raw: Uint8Array; issuerCertificate?: unknown } = { raw: Uint8Array.of(1) };
  root.issuerCertificate = root;
  const leaf = { raw: Uint8Array.of(2), issuerCertificate: root };
  expect(chainFromPeerCertificate(leaf as never)).toEqual([Uint8Array.of(2), Uint8Array.of(1)]);
  expect(chainFromPeerCertificate({})).toEqual([]);
  expect(chainFromPeerCertificate(undefined)).toEqual([]);
});
