import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GwError } from "../../../src/errors.ts";
import { createCertificateAuthority } from "../../../src/pki/ca.ts";
import { issueClientCertificate } from "../../../src/pki/client-cert.ts";
import { createCrl } from "../../../src/pki/crl.ts";
import { parseCertificateDetails } from "../../../src/pki/x509-parse.ts";

const DAY_MS = 86_400_000;
const dir = mkdtempSync(join(tmpdir(), "gw-pki-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
/** openssl's combined stdout+stderr, and whether it exited 0. */
function openssl(...args: string[]): { ok: boolean; out: string } {
  const r = spawnSync("openssl", args, { stdio: ["ignore", "pipe", "pipe"] });
  return { ok: r.status === 0, out: `${r.stdout ?? ""}${r.stderr ?? ""}` };
}
const details = (pem: string) => {
  const r = parseCertificateDetails(new Uint8Array(new X509Certificate(pem).raw));
  if (!r.ok) throw r.error;
  return r.value;
};

const ca = createCertificateAuthority({ commonName: "gw client CA", days: 365 });
const caFile = file("ca.pem", ca.certPem);

describe("createCertificateAuthority", () => {
  test("a self-signed CA: CA:TRUE critical, keyCertSign + cRLSign, SKI", () => {
    const cert = new X509Certificate(ca.certPem);
    expect(cert.subject).toBe("CN=gw client CA");
    expect(cert.issuer).toBe("CN=gw client CA");
    expect(cert.ca).toBe(true);
    expect(cert.verify(cert.publicKey)).toBe(true);
    const d = details(ca.certPem);
    expect(d.isCa).toBe(true);
    expect(d.keyUsage?.sort()).toEqual(["crlSign", "keyCertSign"]);
    expect(d.subjectKeyId).toMatch(/^[0-9A-F]{40}$/);
    const text = openssl("x509", "-in", caFile, "-noout", "-text").out;
    expect(text).toContain("X509v3 Basic Constraints: critical\n                CA:TRUE");
    expect(text).toContain("X509v3 Key Usage: critical\n                Certificate Sign, CRL Sign");
    expect(text).toContain("X509v3 Subject Key Identifier");
    const days = ((cert.validToDate?.getTime() ?? 0) - (cert.validFromDate?.getTime() ?? 0)) / DAY_MS;
    expect(days).toBe(365);
    expect(ca.keyPem).toStartWith("-----BEGIN PRIVATE KEY-----\n");
  });

  test("openssl verifies an intermediate CA and a certificate below it", () => {
    const sub = createCertificateAuthority({ commonName: "gw sub CA", issuer: ca, days: 30 });
    const leaf = issueClientCertificate({ ca: sub, commonName: "erin", days: 1 });
    const r = openssl("verify", "-CAfile", caFile, "-untrusted", file("sub.pem", sub.certPem), "-purpose", "sslclient", file("erin.pem", leaf.certPem));
    expect(r.ok).toBe(true);
    expect(r.out).toContain(": OK");
    expect(details(sub.certPem).authorityKeyId).toBe(details(ca.certPem).subjectKeyId);
  });

  test("bad options throw pki_invalid_options", () => {
    expect(() => createCertificateAuthority({ commonName: "" })).toThrow(GwError);
    expect(() => createCertificateAuthority({ commonName: "x", days: 0 })).toThrow("days must be positive");
  });
});

describe("issueClientCertificate", () => {
  const alice = issueClientCertificate({ ca, commonName: "alice", uid: "alice", email: "alice@example.com", days: 30 });

  test("defaults: digitalSignature, clientAuth, SAN email, AKI = CA SKI; openssl accepts it for sslclient", () => {
    const cert = new X509Certificate(alice.certPem);
    expect(cert.subject).toBe("CN=alice\nUID=alice");
    expect(cert.issuer).toBe("CN=gw client CA");
    expect(cert.ca).toBe(false);
    expect(cert.checkIssued(new X509Certificate(ca.certPem))).toBe(true);
    expect(cert.serialNumber).toBe(alice.serial);
    expect(cert.subjectAltName).toBe("email:alice@example.com");
    const d = details(alice.certPem);
    expect(d.keyUsage).toEqual(["digitalSignature"]);
    expect(d.extKeyUsage).toEqual(["1.3.6.1.5.5.7.3.2"]);
    expect(d.authorityKeyId).toBe(details(ca.certPem).subjectKeyId);
    expect(d.uid).toBe("alice");
    const r = openssl("verify", "-CAfile", caFile, "-purpose", "sslclient", file("alice.pem", alice.certPem));
    expect(r.ok).toBe(true);
    expect(r.out).toContain(": OK");
    expect(openssl("x509", "-in", file("alice.pem", alice.certPem), "-noout", "-subject").out.trim()).toBe(
      "subject=CN = alice, UID = alice",
    );
  });

  test("the key belongs to the certificate", () => {
    const cert = new X509Certificate(alice.certPem);
    expect(cert.checkPrivateKey(require("node:crypto").createPrivateKey(alice.keyPem))).toBe(true);
  });

  test("refusal cases: expired, no clientAuth, no digitalSignature — as openssl sees them too", () => {
    const expired = issueClientCertificate({ ca, commonName: "old", days: 1, notBefore: new Date(Date.now() - 5 * DAY_MS) });
    expect(openssl("verify", "-CAfile", caFile, file("old.pem", expired.certPem)).out).toContain("certificate has expired");

    const server = issueClientCertificate({ ca, commonName: "srv", days: 1, extKeyUsage: ["serverAuth"] });
    expect(details(server.certPem).extKeyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]);
    expect(openssl("verify", "-CAfile", caFile, "-purpose", "sslclient", file("srv.pem", server.certPem)).out).toContain(
      "unsuitable certificate purpose",
    );

    const noEku = issueClientCertificate({ ca, commonName: "x", days: 1, extKeyUsage: [] });
    expect(details(noEku.certPem).extKeyUsage).toBeUndefined();

    const noSig = issueClientCertificate({ ca, commonName: "enc", days: 1, keyUsage: ["keyEncipherment", "dataEncipherment"] });
    expect(details(noSig.certPem).keyUsage?.sort()).toEqual(["dataEncipherment", "keyEncipherment"]);
    const noKu = issueClientCertificate({ ca, commonName: "x", days: 1, keyUsage: [] });
    expect(details(noKu.certPem).keyUsage).toBeUndefined();
    // decipherOnly is bit 8: the BIT STRING grows to two bytes.
    const wide = issueClientCertificate({ ca, commonName: "x", days: 1, keyUsage: ["digitalSignature", "keyAgreement", "decipherOnly"] });
    expect(details(wide.certPem).keyUsage?.sort()).toEqual(["decipherOnly", "digitalSignature", "keyAgreement"]);
  });

  test("each certificate has its own key and serial", () => {
    const a = issueClientCertificate({ ca, commonName: "a", days: 1 });
    const b = issueClientCertificate({ ca, commonName: "a", days: 1 });
    expect(a.serial).not.toBe(b.serial);
    expect(a.keyPem).not.toBe(b.keyPem);
    expect(a.serial).toMatch(/^[0-7][0-9A-F]{31}$/);
  });

  test("bad options throw pki_invalid_options", () => {
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return (e as GwError).code;
      }
    };
    expect(code(() => issueClientCertificate({ ca, commonName: "", days: 1 }))).toBe("pki_invalid_options");
    expect(code(() => issueClientCertificate({ ca, commonName: "a", days: -1 }))).toBe("pki_invalid_options");
    expect(code(() => issueClientCertificate({ ca, commonName: "a", days: 1, email: "no at sign" }))).toBe("pki_invalid_options");
    expect(code(() => issueClientCertificate({ ca: { certPem: alice.certPem, keyPem: alice.keyPem }, commonName: "a", days: 1 }))).toBe(
      "pki_invalid_options",
    );
    const other = createCertificateAuthority({ commonName: "o" });
    expect(code(() => issueClientCertificate({ ca: { certPem: ca.certPem, keyPem: other.keyPem }, commonName: "a", days: 1 }))).toBe(
      "pki_invalid_options",
    );
  });
});

describe("createCrl", () => {
  test("openssl reads it, checks its signature and refuses the revoked certificate", () => {
    const bad = issueClientCertificate({ ca, commonName: "mallory", days: 30 });
    const good = issueClientCertificate({ ca, commonName: "alice", days: 30 });
    const revokedAt = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
    const crl = createCrl({ ca, revoked: [{ serial: bad.serial, date: revokedAt }], nextUpdateDays: 7, crlNumber: 42 });
    expect(crl).toStartWith("-----BEGIN X509 CRL-----\n");
    const crlFile = file("crl.pem", crl);
    const text = openssl("crl", "-in", crlFile, "-noout", "-text", "-CAfile", caFile);
    expect(text.out).toContain("verify OK");
    expect(text.out).toContain(`Serial Number: ${bad.serial}`);
    expect(text.out).toContain("Revocation Date: Jan  2 03:04:05 2026 GMT");
    expect(text.out).toMatch(/X509v3 CRL Number: \n\s+42/);
    expect(text.out).toContain("X509v3 Authority Key Identifier");
    const check = (pem: string, name: string) =>
      openssl("verify", "-crl_check", "-CAfile", caFile, "-CRLfile", crlFile, file(name, pem)).out;
    expect(check(bad.certPem, "bad.pem")).toContain("certificate revoked");
    expect(check(good.certPem, "good.pem")).toContain(": OK");
  });

  test("an empty CRL leaves revokedCertificates out; serials may have colons and odd length", () => {
    const empty = createCrl({ ca, revoked: [], nextUpdateDays: 1 });
    expect(openssl("crl", "-in", file("empty.pem", empty), "-noout", "-text").out).toContain("No Revoked Certificates.");
    const odd = createCrl({ ca, revoked: [{ serial: "a:bc", date: new Date() }], nextUpdateDays: 1 });
    expect(openssl("crl", "-in", file("odd.pem", odd), "-noout", "-text").out).toContain("Serial Number: 0ABC");
    expect(() => createCrl({ ca, revoked: [{ serial: "xyz", date: new Date() }], nextUpdateDays: 1 })).toThrow("not a hex serial");
    expect(() => createCrl({ ca, revoked: [], nextUpdateDays: 0 })).toThrow("nextUpdateDays must be positive");
  });
});
