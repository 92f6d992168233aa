/**
 * `gw pki`: the operator's CA, user certificates (PEM and PKCS#12) and CRL, checked with the
 * gateway's own verifier and, where installed, openssl.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadClientCertTrust } from "../../src/pki/client-cert-trust.ts";
import { verifyClientCertificate } from "../../src/pki/verify-client-cert.ts";
import { gwCli } from "../harness/gateway.ts";

const work = mkdtempSync(join(tmpdir(), "gw-pki-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const gw = (args: string[], input?: string) => gwCli("sources", ["pki", ...args], input);
const der = (file: string) => new Uint8Array(new X509Certificate(readFileSync(file)).raw);

describe("gw pki", () => {
  const ca = join(work, "ca");
  const users = join(work, "users");

  test("ca create writes the CA (key 0600) and never replaces it", () => {
    const r = gw(["ca", "create", "--out", ca, "--cn", "Corp VPN users", "--days", "30"]);
    expect(r.code).toBe(0);
    const cert = new X509Certificate(readFileSync(join(ca, "ca-cert.pem")));
    expect(cert.ca).toBe(true);
    expect(cert.subject).toBe("CN=Corp VPN users");
    expect(statSync(join(ca, "ca-key.pem")).mode & 0o777).toBe(0o600);
    const again = gw(["ca", "create", "--out", ca]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("gw: file_exists:");
  });

  test("client issue: PEM certificate and key, and a PKCS#12 with the printed password; the gateway accepts it", () => {
    const r = gw(["client", "issue", "alice", "--ca", ca, "--out", users, "--email", "alice@example.com"]);
    expect(r.code).toBe(0);
    const password = r.stdout.trim();
    expect(password).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(statSync(join(users, "alice-key.pem")).mode & 0o777).toBe(0o600);
    const trust = loadClientCertTrust(readFileSync(join(ca, "ca-cert.pem"), "utf8"));
    if (!trust.ok) throw trust.error;
    const v = verifyClientCertificate([der(join(users, "alice-cert.pem"))], trust.value);
    expect(v.ok && v.value.subjectCN).toBe("alice");
    expect(v.ok && v.value.emails).toEqual(["alice@example.com"]);
    if (Bun.which("openssl")) {
      const p12 = spawnSync("openssl", ["pkcs12", "-in", join(users, "alice.p12"), "-passin", `pass:${password}`, "-nodes"], { encoding: "utf8" });
      expect(p12.status).toBe(0);
      expect(p12.stdout).toMatch(/subject=CN ?= ?alice/);
    }
  });

  test("client issue with --p12-password-stdin prints no password; an existing user's files are kept", () => {
    const r = gw(["client", "issue", "bob", "--ca", ca, "--out", users, "--p12-password-stdin"], "bob-p12-pass\n");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    if (Bun.which("openssl")) {
      expect(spawnSync("openssl", ["pkcs12", "-in", join(users, "bob.p12"), "-passin", "pass:bob-p12-pass", "-nokeys"]).status).toBe(0);
    }
    const again = gw(["client", "issue", "bob", "--ca", ca, "--out", users]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("bob-cert.pem already exists");
  });

  test("crl --revoke: the revoked certificate is refused, the others pass", () => {
    const serial = new X509Certificate(readFileSync(join(users, "bob-cert.pem"))).serialNumber;
    const crlFile = join(work, "crl.pem");
    expect(gw(["crl", "--ca", ca, "--revoke", serial, "--out", crlFile]).code).toBe(0);
    const trust = loadClientCertTrust(readFileSync(join(ca, "ca-cert.pem"), "utf8"), readFileSync(crlFile, "utf8"));
    if (!trust.ok) throw trust.error;
    const bob = verifyClientCertificate([der(join(users, "bob-cert.pem"))], trust.value);
    expect(bob.ok ? "ok" : bob.error.code).toBe("cert_revoked");
    expect(verifyClientCertificate([der(join(users, "alice-cert.pem"))], trust.value).ok).toBe(true);
  });

  test("usage errors exit 2, a missing CA exits 1 with the command that makes one", () => {
    expect(gw(["ca", "create"]).code).toBe(2);
    expect(gw(["client", "issue", "carol", "--out", users]).stderr).toContain("--ca is required");
    expect(gw(["client", "issue", "no spaces", "--ca", ca, "--out", users]).code).toBe(2);
    expect(gw(["client", "issue", "carol", "--ca", ca, "--out", users, "--days", "0"]).code).toBe(2);
    expect(gw(["crl", "--ca", ca, "--revoke", "xyz", "--out", join(work, "x.pem")]).code).toBe(2);
    const missing = gw(["client", "issue", "carol", "--ca", join(work, "nope"), "--out", users]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("gw pki ca create --out");
  }, 30_000); // five CLI runs: slow on a loaded machine
});
