import { describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { X509Certificate, createHash, generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tls from "node:tls";
import * as der from "../../../src/pki/der.ts";
import { certificateExpiry, loadCertificatePair, pinSha256 } from "../../../src/pki/pin.ts";
import { createSelfSignedCertificate } from "../../../src/pki/self-signed.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const DAY_MS = 86_400_000;

const pair = createSelfSignedCertificate({
  commonName: "gw.test",
  dnsNames: ["gw.test", "localhost"],
  ipAddresses: ["127.0.0.1", "::1", "2001:db8::a:b", "::ffff:192.0.2.1"],
});
const cert = new X509Certificate(pair.certPem);

/** Runs an openssl pipeline (via sh) on stdin; synchronous, so never while our server must answer. */
const sh = (script: string, input: string) => execFileSync("sh", ["-c", script], { input }).toString();

describe("der", () => {
  test("INTEGER is minimal and positive", () => {
    expect(hex(der.integer(Uint8Array.of(0x00, 0x00, 0x7f)))).toBe("02017f");
    expect(hex(der.integer(Uint8Array.of(0x80)))).toBe("02020080");
    expect(hex(der.integer(new Uint8Array(0)))).toBe("020100");
    expect(hex(der.smallInteger(2))).toBe("020102");
    expect(hex(der.smallInteger(0))).toBe("020100");
  });

  test("OID, lengths, tags", () => {
    expect(hex(der.oid("1.2.840.10045.4.3.2"))).toBe("06082a8648ce3d040302");
    expect(hex(der.oid("2.5.29.17"))).toBe("0603551d11");
    expect(() => der.oid("1.40")).toThrow();
    expect(hex(der.octetString(new Uint8Array(200))).slice(0, 6)).toBe("0481c8");
    expect(hex(der.octetString(new Uint8Array(300))).slice(0, 8)).toBe("0482012c");
    expect(hex(der.explicit(0, der.smallInteger(2)))).toBe("a003020102");
    expect(hex(der.implicit(2, der.ia5String("a")))).toBe("820161");
    expect(hex(der.implicit(1, der.sequence()))).toBe("a100");
    expect(hex(der.boolean(true))).toBe("0101ff");
    expect(hex(der.nullValue())).toBe("0500");
    expect(hex(der.bitString(Uint8Array.of(0x80), 7))).toBe("03020780");
    expect(() => der.printableString("a@b")).toThrow();
  });

  test("SET OF is sorted", () => {
    expect(hex(der.set(der.smallInteger(3), der.smallInteger(1)))).toBe("3106020101020103");
  });

  test("UTCTime before 2050, GeneralizedTime from 2050", () => {
    const ascii = (b: Uint8Array) => Buffer.from(b.subarray(2)).toString();
    const utc = der.time(new Date(Date.UTC(2049, 11, 31, 23, 59, 59)));
    expect(utc[0]).toBe(0x17);
    expect(ascii(utc)).toBe("491231235959Z");
    const gen = der.time(new Date(Date.UTC(2050, 0, 1, 0, 0, 0)));
    expect(gen[0]).toBe(0x18);
    expect(ascii(gen)).toBe("20500101000000Z");
  });
});

describe("createSelfSignedCertificate", () => {
  test("parses with X509Certificate and is correctly self-signed", () => {
    expect(cert.subject).toBe("CN=gw.test");
    expect(cert.issuer).toBe("CN=gw.test");
    expect(cert.ca).toBe(false);
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.publicKey.asymmetricKeyDetails?.namedCurve).toBe("prime256v1");
    expect(cert.serialNumber).toMatch(/^[0-7][0-9A-F]{31}$/);
    expect(cert.subjectAltName).toBe(
      "DNS:gw.test, DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, " +
        "IP Address:2001:DB8:0:0:0:0:A:B, IP Address:0:0:0:0:0:FFFF:C000:201",
    );
    expect(loadCertificatePair(pair.certPem, pair.keyPem).ok).toBe(true);
    expect(pair.keyPem).toStartWith("-----BEGIN PRIVATE KEY-----\n");
  });

  test("validity: now (slightly backdated) for 3650 days by default", () => {
    const from = cert.validFromDate.getTime();
    expect(from).toBeLessThanOrEqual(Date.now());
    expect(from).toBeGreaterThan(Date.now() - 3_600_000);
    expect(cert.validToDate.getTime() - from).toBe(3650 * DAY_MS);
    expect(certificateExpiry(pair.certPem).getTime()).toBe(cert.validToDate.getTime());
  });

  test("openssl x509 -text shows the expected fields", () => {
    const text = sh("openssl x509 -noout -text", pair.certPem);
    expect(text).toContain("Version: 3 (0x2)");
    expect(text).toContain("Signature Algorithm: ecdsa-with-SHA256");
    expect(text).toContain("Subject: CN = gw.test");
    expect(text).toContain("Issuer: CN = gw.test");
    expect(text).toContain("NIST CURVE: P-256");
    expect(text).toMatch(/X509v3 Basic Constraints: critical\s+CA:FALSE/);
    expect(text).toMatch(/X509v3 Key Usage: critical\s+Digital Signature\n/);
    expect(text).toMatch(/X509v3 Extended Key Usage:\s*\n\s+TLS Web Server Authentication\n/);
    expect(text).toContain(
      "DNS:gw.test, DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, " +
        "IP Address:2001:DB8:0:0:0:0:A:B, IP Address:0:0:0:0:0:FFFF:C000:201",
    );
    // Subject key identifier = SHA-1 of the public key bits (RFC 5280 method 1).
    const point = cert.publicKey.export({ type: "spki", format: "der" }).subarray(-65);
    const ski = createHash("sha1").update(point).digest("hex").toUpperCase().match(/../g)!.join(":");
    expect(text).toMatch(new RegExp(`X509v3 Subject Key Identifier:\\s*\\n\\s+${ski}\\n`));
    expect(sh("openssl x509 -noout -startdate -enddate -dateopt iso_8601", pair.certPem)).toContain(
      `notAfter=${cert.validToDate.toISOString().slice(0, 19).replace("T", " ")}Z`,
    );
  });

  test("validity ending in 2050 or later uses GeneralizedTime", () => {
    const long = createSelfSignedCertificate({ commonName: "long", days: 40 * 365 });
    const parsed = sh("openssl asn1parse", long.certPem);
    expect(parsed).toMatch(/UTCTIME\s+:\d{12}Z/);
    expect(parsed).toMatch(/GENERALIZEDTIME\s+:20\d{12}Z/);
    expect(new X509Certificate(long.certPem).validToDate.getUTCFullYear()).toBeGreaterThanOrEqual(2050);
    // No names given: no (invalid, empty) subjectAltName extension at all.
    expect(new X509Certificate(long.certPem).subjectAltName).toBeUndefined();
  });

  test("bad options throw cert_invalid_options", () => {
    for (const options of [
      { commonName: "" },
      { commonName: "x", ipAddresses: ["300.1.1.1"] },
      { commonName: "x", ipAddresses: ["fe80::1%eth0"] },
      { commonName: "x", dnsNames: ["bad name"] },
      { commonName: "x", days: 0 },
    ]) {
      expect(() => createSelfSignedCertificate(options)).toThrow(
        expect.objectContaining({ code: "cert_invalid_options" }),
      );
    }
  });
});

describe("pinSha256", () => {
  test("matches the openssl pipeline", () => {
    const b64 = sh(
      "openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64",
      pair.certPem,
    ).trim();
    expect(pinSha256(pair.certPem)).toBe(`pin-sha256:${b64}`);
  });

  test("unreadable PEM throws cert_unreadable", () => {
    expect(() => pinSha256("nope")).toThrow(expect.objectContaining({ code: "cert_unreadable" }));
  });
});

describe("loadCertificatePair", () => {
  const other = createSelfSignedCertificate({ commonName: "other" });

  test("error codes", () => {
    const code = (c: string, k: string) => {
      const r = loadCertificatePair(c, k);
      return r.ok ? "ok" : r.error.code;
    };
    expect(code("garbage", pair.keyPem)).toBe("cert_unreadable");
    expect(code(pair.keyPem, pair.keyPem)).toBe("cert_unreadable");
    expect(code(pair.certPem, "garbage")).toBe("key_unreadable");
    expect(code(pair.certPem, pair.certPem)).toBe("key_unreadable");
    const encrypted = generateKeyPairSync("ec", { namedCurve: "prime256v1" }).privateKey.export({
      type: "pkcs8",
      format: "pem",
      cipher: "aes-256-cbc",
      passphrase: "secret",
    }) as string;
    expect(code(pair.certPem, encrypted)).toBe("key_unreadable");
    expect(code(pair.certPem, other.keyPem)).toBe("cert_key_mismatch");
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
    expect(code(pair.certPem, rsa.export({ type: "pkcs8", format: "pem" }) as string)).toBe(
      "cert_key_mismatch",
    );
    expect(code(pair.certPem + other.certPem, pair.keyPem)).toBe("ok"); // chain file: leaf first
  });

  test("messages tell the operator what to do", () => {
    const r = loadCertificatePair(pair.certPem, other.keyPem);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toContain("does not belong to the certificate");
  });
});

/** A TLS server on 127.0.0.1 with the generated pair; answers any request with 404 and closes. */
async function withServer<T>(run: (port: number) => Promise<T>): Promise<T> {
  const server = tls.createServer({ cert: pair.certPem, key: pair.keyPem }, (socket) => {
    socket.on("error", () => {});
    socket.once("data", () =>
      socket.end("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    return await run((server.address() as AddressInfo).port);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe("TLS with the generated pair", () => {
  for (const version of ["TLSv1.2", "TLSv1.3"] as const) {
    test(`node:tls client, ${version}`, async () => {
      const seen = await withServer(
        (port) =>
          new Promise<{ protocol: string | null; fingerprint: string }>((resolve, reject) => {
            const socket = tls.connect(
              { host: "127.0.0.1", port, rejectUnauthorized: false, minVersion: version, maxVersion: version },
              () => {
                const result = { protocol: socket.getProtocol(), fingerprint: socket.getPeerCertificate().fingerprint256 };
                socket.end();
                resolve(result);
              },
            );
            socket.on("error", reject);
          }),
      );
      expect(seen.protocol).toBe(version);
      expect(seen.fingerprint).toBe(cert.fingerprint256);
    });
  }
});

const openconnect = Bun.which("openconnect");

/** Runs `openconnect --authenticate` non-interactively against our server; returns its stderr. */
async function runOpenconnect(port: number, args: string[]): Promise<string> {
  const proc = Bun.spawn(
    [openconnect!, "--protocol=anyconnect", ...args, "--authenticate", "--non-inter", `https://127.0.0.1:${port}/`],
    { stdin: "ignore", stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "", LC_ALL: "C" } },
  );
  const timer = setTimeout(() => proc.kill(), 20_000);
  const [stderr] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return stderr;
}

describe.skipIf(!openconnect)("openconnect --servercert", () => {
  const pin = pinSha256(pair.certPem);
  // What openconnect prints once TLS (certificate check included) succeeded and HTTP began.
  const connected = /Connected to HTTPS on 127\.0\.0\.1 with ciphersuite .*\nGot HTTP response: HTTP\/1\.1 404/;

  test("accepts the pin (and any >= 4-char prefix of it)", async () => {
    for (const p of [pin, pin.slice(0, "pin-sha256:".length + 8)]) {
      const stderr = await withServer((port) => runOpenconnect(port, ["--servercert", p]));
      // Normal validation fails first (self-signed); the pin must then rescue the handshake.
      expect(stderr).toContain("Server certificate verify failed");
      expect(stderr).toMatch(connected);
      expect(stderr).not.toContain("match server's certificate");
      expect(stderr).not.toContain("Error in the certificate");
    }
  });

  test("refuses a wrong pin and reports ours as the server's", async () => {
    const wrong = pinSha256(createSelfSignedCertificate({ commonName: "other" }).certPem);
    const stderr = await withServer((port) => runOpenconnect(port, ["--servercert", wrong]));
    expect(stderr).toContain(`None of the 1 fingerprint(s) specified via --servercert match server's certificate: ${pin}`);
    expect(stderr).toContain("SSL connection failure: Error in the certificate");
    expect(stderr).not.toMatch(connected);
  });

  test("without a pin it refuses and suggests exactly our pin", async () => {
    const stderr = await withServer((port) => runOpenconnect(port, []));
    expect(stderr).toContain(`--servercert ${pin}\n`);
    expect(stderr).not.toMatch(connected);
  });

  test("GnuTLS fully validates it (IP SAN 127.0.0.1) when given as --cafile", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gw-pki-"));
    try {
      writeFileSync(join(dir, "ca.pem"), pair.certPem);
      const stderr = await withServer((port) => runOpenconnect(port, ["--cafile", join(dir, "ca.pem")]));
      expect(stderr).not.toContain("verify failed");
      expect(stderr).toMatch(connected);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
