import { afterAll, describe, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { X509Certificate, createPrivateKey } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tls from "node:tls";
import { createCertificateAuthority } from "../../../src/pki/ca.ts";
import { issueClientCertificate } from "../../../src/pki/client-cert.ts";
import { pinSha256 } from "../../../src/pki/pin.ts";
import { bmpPassword, pkcs12Kdf } from "../../../src/pki/pkcs12-kdf.ts";
import { toPkcs12 } from "../../../src/pki/pkcs12.ts";
import { createSelfSignedCertificate } from "../../../src/pki/self-signed.ts";
import { chainFromPeerCertificate, verifyClientCertificate } from "../../../src/pki/verify-client-cert.ts";

const dir = mkdtempSync(join(tmpdir(), "gw-p12-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ca = createCertificateAuthority({ commonName: "gw client CA" });
const alice = issueClientCertificate({ ca, commonName: "alice", email: "alice@example.com", days: 30 });
const PASSWORD = "correct horse pässwörd";
const p12 = toPkcs12({ ...alice, caPem: ca.certPem, password: PASSWORD });
const p12File = join(dir, "alice.p12");
writeFileSync(p12File, p12);

function run(cmd: string, args: string[]) {
  const r = spawnSync(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
  return { ok: r.status === 0, out: `${r.stdout ?? ""}${r.stderr ?? ""}` };
}
const hex = (s: string) => new Uint8Array(Buffer.from(s, "hex"));
const upperHex = (b: Uint8Array) => Buffer.from(b).toString("hex").toUpperCase();

describe("PKCS#12 key derivation (RFC 7292 B.2)", () => {
  // The classic vectors OpenSSL and Bouncy Castle test with (SHA-1, several output blocks).
  test("known answers", () => {
    expect(upperHex(pkcs12Kdf("sha1", bmpPassword("smeg"), hex("0A58CF64530D823F"), 1, 1, 24))).toBe(
      "8AAAE6297B6CB04642AB5B077851284EB7128F1A2A7FBCA3",
    );
    expect(upperHex(pkcs12Kdf("sha1", bmpPassword("smeg"), hex("0A58CF64530D823F"), 1, 2, 8))).toBe("79993DFE048D3B76");
    expect(upperHex(pkcs12Kdf("sha1", bmpPassword("queeg"), hex("1682C0FC5B3F7EC5"), 1000, 1, 24))).toBe(
      "483DD6E919D7DE2E8E648BA8F862F3FBFBDC2BCB2C02957F",
    );
  });
  test("BMPString password with the trailing NUL", () => {
    expect(upperHex(bmpPassword("aé"))).toBe("006100E90000");
  });
});

describe("toPkcs12", () => {
  test("openssl lists the modern algorithms with the password (-info -nokeys)", () => {
    const r = run("openssl", ["pkcs12", "-in", p12File, "-passin", `pass:${PASSWORD}`, "-info", "-nokeys"]);
    expect(r.ok).toBe(true);
    expect(r.out).toContain("MAC: sha256, Iteration 100000");
    expect(r.out).toContain("PKCS7 Encrypted data: PBES2, PBKDF2, AES-256-CBC, Iteration 100000, PRF hmacWithSHA256");
    expect(r.out).toContain("Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC, Iteration 100000, PRF hmacWithSHA256");
    expect(r.out).toContain("friendlyName: alice");
    expect(r.out.match(/-----BEGIN CERTIFICATE-----/g)?.length).toBe(2);
  });

  test("openssl -nodes returns the same certificate and its key", () => {
    const r = run("openssl", ["pkcs12", "-in", p12File, "-passin", `pass:${PASSWORD}`, "-nodes"]);
    expect(r.ok).toBe(true);
    const key = createPrivateKey(/-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----/.exec(r.out)![0]);
    const leaf = new X509Certificate(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(r.out)![0]);
    expect(leaf.raw.equals(new X509Certificate(alice.certPem).raw)).toBe(true);
    expect(leaf.checkPrivateKey(key)).toBe(true);
  });

  test("a wrong password fails the MAC check", () => {
    const r = run("openssl", ["pkcs12", "-in", p12File, "-passin", "pass:wrong", "-nokeys"]);
    expect(r.ok).toBe(false);
    expect(r.out).toMatch(/mac verify/i);
  });

  // Optional: the openconnect test below already proves GnuTLS loads the file.
  test("GnuTLS (certtool) decrypts it, when certtool is installed", () => {
    if (run("sh", ["-c", "command -v certtool"]).ok === false) {
      console.warn("skipped: certtool not installed (apt-get install gnutls-bin); the openconnect test covers GnuTLS");
      return;
    }
    const r = run("certtool", ["--p12-info", "--inder", "--password", PASSWORD, "--infile", p12File]);
    expect(r.ok).toBe(true);
    expect(r.out).toContain("MAC: SHA256");
    expect(r.out).toContain("PBES2-AES256-CBC");
    expect(r.out).toContain("Friendly name: alice");
  });

  test("without a CA, with an RSA key, with an empty password", () => {
    const rsa = issueClientCertificate({ ca, commonName: "bob", days: 1, keyAlgorithm: "rsa-2048" });
    const f = join(dir, "bob.p12");
    writeFileSync(f, toPkcs12({ ...rsa, password: "", iterations: 2048 }));
    const r = run("openssl", ["pkcs12", "-in", f, "-passin", "pass:", "-nodes"]);
    expect(r.ok).toBe(true);
    expect(r.out.match(/-----BEGIN CERTIFICATE-----/g)?.length).toBe(1);
    expect(r.out).toContain("-----BEGIN PRIVATE KEY-----");
  });

  test("refuses a key that does not belong to the certificate", () => {
    const other = issueClientCertificate({ ca, commonName: "x", days: 1 });
    expect(() => toPkcs12({ certPem: alice.certPem, keyPem: other.keyPem, password: "x" })).toThrow("does not belong");
    expect(() => toPkcs12({ certPem: "nope", keyPem: other.keyPem, password: "x" })).toThrow("not a readable PEM certificate");
  });

  // openconnect (GnuTLS) loads the file and presents the certificate in a real handshake; the
  // server side then verifies what it received. The server only needs to see the handshake.
  test("openconnect --certificate file.p12 --key-password presents the certificate", async () => {
    if (!run("sh", ["-c", "command -v openconnect"]).ok) {
      if (process.env.CI === "true") throw new Error("openconnect is missing in CI");
      console.warn("skipped: openconnect not installed");
      return;
    }
    const server = createSelfSignedCertificate({ commonName: "gw.test", ipAddresses: ["127.0.0.1"] });
    const seen = Promise.withResolvers<tls.DetailedPeerCertificate>();
    const srv = tls.createServer(
      { cert: server.certPem, key: server.keyPem, requestCert: true, rejectUnauthorized: false },
      (socket) => {
        seen.resolve(socket.getPeerCertificate(true));
        socket.on("error", () => {});
        socket.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      },
    );
    await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
    const { port } = srv.address() as AddressInfo;
    const child = spawn(
      "openconnect",
      [
        "--authenticate",
        "--non-inter",
        `--servercert=${pinSha256(server.certPem)}`,
        `--certificate=${p12File}`,
        `--key-password=${PASSWORD}`,
        `https://127.0.0.1:${port}/`,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    try {
      const peer = await Promise.race([
        seen.promise,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`no handshake within 15 s; openconnect said:\n${output}`)), 15_000),
        ),
      ]);
      const r = verifyClientCertificate(chainFromPeerCertificate(peer), { caPem: ca.certPem });
      expect(r.ok).toBe(true);
      if (r.ok) expect(r.value.serial).toBe(alice.serial);
    } finally {
      child.kill();
      srv.close();
    }
  }, 20_000);
});
