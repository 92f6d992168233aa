/**
 * `gw serve --client-ca FILE [--crl FILE] [--cert-user-attribute A]`: a bad CA or CRL stops the
 * start with one clear line and exit code 1, before any listener or TUN device exists.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCertificateAuthority } from "../../src/pki/ca.ts";
import { issueClientCertificate } from "../../src/pki/client-cert.ts";
import { createCrl } from "../../src/pki/crl.ts";
import { gwArgv } from "../harness/gateway.ts";

const work = mkdtempSync(join(tmpdir(), "gw-client-ca-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const file = (name: string, text: string) => {
  const path = join(work, name);
  writeFileSync(path, text);
  return path;
};
const ca = createCertificateAuthority({ commonName: "startup CA" });
const caFile = file("ca.pem", ca.certPem);
const leafFile = file("leaf.pem", issueClientCertificate({ ca, commonName: "alice", days: 1 }).certPem);
const otherCrl = file("other-crl.pem", createCrl({ ca: createCertificateAuthority({ commonName: "other" }), revoked: [], nextUpdateDays: 1 }));
const garbage = file("garbage.pem", "not a pem file\n");

const serve = (args: string[]) => {
  const r = spawnSync(gwArgv("sources")[0]!, [...gwArgv("sources").slice(1), "serve", "--data-dir", join(work, "data"), "--listen", "127.0.0.1", "--port", "18443", "--api-listen", "127.0.0.1:18444", "--tun", "gwca0", ...args], {
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: r.status, stderr: r.stderr.trim() };
};

const expectOneLine = (r: { code: number | null; stderr: string }, code: string, hint: RegExp) => {
  expect(r.stderr.split("\n")).toHaveLength(1);
  expect(r.stderr).toStartWith(`gw: ${code}: `);
  expect(r.stderr).toMatch(hint);
  expect(r.code).toBe(1);
};

describe("gw serve client-certificate settings", () => {
  test("an unreadable client CA file", () => {
    expectOneLine(serve(["--client-ca", join(work, "missing.pem")]), "client_ca_unreadable", /missing\.pem: ENOENT/);
  });

  test("a client CA file without a certificate, or with a certificate that is not a CA", () => {
    expectOneLine(serve(["--client-ca", garbage]), "client_ca_invalid", /garbage\.pem: .*no PEM certificate/);
    expectOneLine(serve(["--client-ca", leafFile]), "client_ca_invalid", /leaf\.pem: .*CN=alice.* is not a CA/);
  });

  test("a CRL of another CA, an unreadable one, or one without --client-ca", () => {
    expectOneLine(serve(["--client-ca", caFile, "--crl", otherCrl]), "crl_untrusted", /other-crl\.pem: .*not signed by any certificate in the client CA file/);
    expectOneLine(serve(["--client-ca", caFile, "--crl", join(work, "nope.pem")]), "crl_unreadable", /nope\.pem: ENOENT/);
    expectOneLine(serve(["--crl", otherCrl]), "invalid_config", /--crl needs --client-ca/);
  });

  test("an unknown --cert-user-attribute", () => {
    expectOneLine(serve(["--client-ca", caFile, "--cert-user-attribute", "serial"]), "invalid_config", /certUserAttribute/);
  });
});
