/**
 * Client-certificate login end to end: Debian's openconnect presents certificates made with
 * `gw pki` (and, for the broken ones, the same pki functions) to `gw serve --client-ca --crl`.
 * Certificate only, certificate+password, and each refusal with its message in openconnect's
 * output; password users keep logging in on the same gateway. Also through `--workers 2`, where
 * a worker process asks for the certificate and checks it, and the main process's login flow
 * reads its verdict (docs/architecture.md §7).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { X509Certificate } from "node:crypto";
import { createCertificateAuthority } from "../../src/pki/ca.ts";
import { issueClientCertificate, type ClientCertificateOptions } from "../../src/pki/client-cert.ts";
import { gwCli, startGw, tempDir, type GwVariant, type RunningGw } from "../harness/gateway.ts";
import { clientScript, scriptEnv, waitForScript } from "../harness/openconnect.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup, type Started } from "../harness/processes.ts";
import { createTopology, type Topology } from "../harness/topology.ts";

const cases: { variant: GwVariant; tag: string; flags: string[]; label: string }[] = [
  { variant: "sources", tag: "cs", flags: [], label: "sources" },
  { variant: "binary", tag: "cb", flags: [], label: "binary" },
  { variant: "sources", tag: "cw", flags: ["--workers", "2"], label: "sources, --workers 2" },
];

for (const { variant, tag, flags, label } of cases) {
  describe.skipIf(!e2eAvailable(variant))(`openconnect with client certificates against gw (${label})`, () => {
    let topology: Topology;
    let procs: ProcessGroup;
    let gw: RunningGw;
    let work: string;
    let pki: string;
    const run = (ns: string, argv: string[]) => execFileSync(topology.exec(ns)[0]!, [...topology.exec(ns).slice(1), ...argv], { encoding: "utf8", timeout: 60_000 });

    /** A certificate from the pki functions, for the cases `gw pki` refuses to make. */
    function writeCert(name: string, o: Omit<ClientCertificateOptions, "days"> & { days?: number }): { cert: string; key: string } {
      const issued = issueClientCertificate({ days: 30, ...o });
      const cert = join(pki, `${name}-cert.pem`);
      const key = join(pki, `${name}-key.pem`);
      writeFileSync(cert, issued.certPem);
      writeFileSync(key, issued.keyPem, { mode: 0o600 });
      return { cert, key };
    }
    const pem = (name: string) => ({ cert: join(pki, "users", `${name}-cert.pem`), key: join(pki, "users", `${name}-key.pem`) });
    let bad: Record<"expired" | "noEku" | "unknown" | "foreign" | "revoked", { cert: string; key: string }>;
    let revokedSerial: string;
    const gwOk = (args: string[], input?: string) => {
      const r = gwCli(variant, args, input);
      if (r.code !== 0) throw new Error(`gw ${args.join(" ")} failed: ${r.stderr}`);
      return r.stdout;
    };

    beforeAll(async () => {
      topology = createTopology(tag);
      procs = new ProcessGroup();
      work = tempDir(`cert-${tag}`);
      pki = join(work, "pki");
      const dataDir = join(work, "data");
      const cli = (args: string[], input?: string) => gwOk([...args, "--data-dir", dataDir], input);

      // The operator's PKI, made with gw pki.
      gwOk(["pki", "ca", "create", "--out", join(pki, "ca"), "--cn", "e2e client CA"]);
      for (const name of ["carol", "dave"]) gwOk(["pki", "client", "issue", name, "--ca", join(pki, "ca"), "--out", join(pki, "users"), "--p12-password-stdin"], `${name}-p12\n`);
      const ca = { certPem: readFileSync(join(pki, "ca", "ca-cert.pem"), "utf8"), keyPem: readFileSync(join(pki, "ca", "ca-key.pem"), "utf8") };
      bad = {
        expired: writeCert("expired", { ca, commonName: "carol", notBefore: new Date(Date.now() - 10 * 86_400_000), days: 2 }),
        noEku: writeCert("no-eku", { ca, commonName: "carol", extKeyUsage: [] }),
        unknown: writeCert("unknown", { ca, commonName: "zed" }),
        foreign: writeCert("foreign", { ca: createCertificateAuthority({ commonName: "e2e client CA" }), commonName: "carol" }),
        revoked: writeCert("revoked", { ca, commonName: "carol" }),
      };
      revokedSerial = new X509Certificate(readFileSync(bad.revoked.cert)).serialNumber;
      gwOk(["pki", "crl", "--ca", join(pki, "ca"), "--revoke", revokedSerial, "--out", join(pki, "crl.pem")]);

      cli(["init"]); // the CLI never creates a data directory
      cli(["group", "add", "certonly", "--auth", "certificate", "--route", "198.51.100.0/24"]);
      cli(["group", "add", "certpw", "--auth", "certificate+password", "--route", "198.51.100.0/24"]);
      cli(["group", "add", "staff", "--route", "198.51.100.0/24"]);
      cli(["user", "add", "carol", "--group", "certonly"]);
      cli(["user", "add", "dave", "--group", "certpw", "--password-stdin"], "dave-pass-1\n");
      cli(["user", "add", "erin", "--group", "certpw", "--password-stdin"], "erin-pass-2\n");
      cli(["user", "add", "alice", "--group", "staff", "--password-stdin"], "alice-pass-3\n");
      // Refusals are the point here: keep the brute-force guard out of the way.
      const settings = JSON.parse(cli(["config", "get"]));
      cli(["config", "set", "-"], JSON.stringify({ ...settings, loginMaxFailuresPerIp: 1000, loginMaxFailuresPerUser: 1000 }));

      gw = await startGw(variant, topology, procs, dataDir, ["--client-ca", join(pki, "ca", "ca-cert.pem"), "--crl", join(pki, "crl.pem"), ...flags]);
      if (flags.includes("--workers")) expect(gw.process.stderr()).toContain("2 worker processes");
    }, 120_000);

    afterAll(async () => {
      await procs?.stopAll();
      topology?.destroy();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    let interfaces = 0;
    /** openconnect in the client namespace; `password` undefined: nothing on stdin, no -u. */
    function openconnect(name: string, o: { certificate?: string[]; user?: string; password?: string; flags?: string[] }): { oc: Started; state: string } {
      const state = join(work, `oc-${name}`);
      mkdirSync(state, { recursive: true });
      const oc = procs.start(
        [
          ...topology.exec(topology.client),
          "openconnect",
          "--protocol=anyconnect",
          "--non-inter",
          ...(o.user ? ["-u", o.user] : []),
          ...(o.password !== undefined ? ["--passwd-on-stdin"] : []),
          ...(o.certificate ?? []),
          "--servercert",
          gw.pin,
          "--script",
          clientScript,
          "--interface",
          `occ${interfaces++}`,
          "--no-dtls",
          ...(o.flags ?? []),
          `https://${topology.gatewayOutside}/`,
        ],
        { stdin: o.password !== undefined ? `${o.password}\n` : "", env: { GW_E2E_STATE: state } },
      );
      return { oc, state };
    }
    const withPem = (c: { cert: string; key: string }) => ["--certificate", c.cert, "--sslkey", c.key];
    const output = (oc: Started) => oc.stdout() + oc.stderr();

    async function expectRefused(name: string, certificate: { cert: string; key: string }, message: string | RegExp): Promise<void> {
      const { oc, state } = openconnect(name, { certificate: withPem(certificate), user: "carol", password: "not-a-password", flags: ["--authgroup", "certonly"] });
      const code = await oc.exited;
      expect(code).not.toBe(0);
      if (typeof message === "string") expect(output(oc)).toContain(message);
      else expect(output(oc)).toMatch(message);
      expect(scriptEnv(state, "connect")).toBeUndefined();
    }

    test("certificate only: logs in at the first request without a password and pings the LAN host", async () => {
      const { oc, state } = openconnect("carol", { certificate: withPem(pem("carol")) });
      const env = await waitForScript(state, "connect");
      expect(env.get("INTERNAL_IP4_ADDRESS")).toMatch(/^10\.10\.0\.\d+$/);
      expect(output(oc)).not.toMatch(/password/i);
      // The init itself was answered with success: no second request to /auth.
      expect(output(oc)).toContain(`POST https://${topology.gatewayOutside}/`);
      expect(output(oc)).not.toContain(`POST https://${topology.gatewayOutside}/auth`);
      expect(run(topology.client, ["ping", "-c", "2", "-W", "2", topology.lanHost])).toContain("2 received");
      expect(gw.process.stderr()).toMatch(/login ok user=carol group=certonly .* password_check_ms=-$/m); // no password asked
      oc.child.kill("SIGINT");
      await oc.exited;
    }, 60_000);

    test("certificate only with the PKCS#12 file made by gw pki", async () => {
      const { oc, state } = openconnect("carol-p12", { certificate: ["--certificate", join(pki, "users", "carol.p12"), "--key-password", "carol-p12"] });
      await waitForScript(state, "connect");
      oc.child.kill("SIGINT");
      await oc.exited;
    }, 60_000);

    test("certificate+password: the certificate holder's password logs in", async () => {
      const { oc, state } = openconnect("dave", { certificate: withPem(pem("dave")), user: "dave", password: "dave-pass-1" });
      await waitForScript(state, "connect");
      expect(run(topology.client, ["ping", "-c", "1", "-W", "2", topology.lanHost])).toContain("1 received");
      expect(gw.process.stderr()).toMatch(/login ok user=dave group=certpw .* password_check_ms=\d+\.\d$/m); // the argon2id check it cost
      oc.child.kill("SIGINT");
      await oc.exited;
    }, 60_000);

    test("certificate+password: another user's name and password with dave's certificate is refused", async () => {
      const { oc, state } = openconnect("dave-as-erin", { certificate: withPem(pem("dave")), user: "erin", password: "erin-pass-2" });
      expect(await oc.exited).not.toBe(0);
      expect(output(oc)).toContain("The user name must be the certificate's: dave.");
      expect(scriptEnv(state, "connect")).toBeUndefined();
    }, 60_000);

    test("certificate+password: no certificate, no login", async () => {
      const { oc, state } = openconnect("dave-nocert", { user: "dave", password: "dave-pass-1", flags: ["--authgroup", "certpw"] });
      expect(await oc.exited).not.toBe(0);
      expect(output(oc)).toContain("none was presented");
      expect(scriptEnv(state, "connect")).toBeUndefined();
    }, 60_000);

    test("an expired certificate is refused", () => expectRefused("expired", bad.expired, /expired on \d{4}-/), 60_000);
    test("a certificate without the clientAuth extended key usage is refused", () => expectRefused("noeku", bad.noEku, "lacks clientAuth"), 60_000);
    test("a certificate naming no user is refused", () => expectRefused("unknown", bad.unknown, "no user named zed"), 60_000);
    // dave's certificate, carol typed: the form asks for dave's password and refuses another name.
    test("a certificate naming another user than the one typed is refused", () => expectRefused("other-user", pem("dave"), "The user name must be the certificate's: dave."), 60_000);
    test("a certificate from another CA is refused", () => expectRefused("foreign", bad.foreign, "does not chain to a configured client CA"), 60_000);
    test("a certificate revoked by the CRL is refused", () => expectRefused("revoked", bad.revoked, "was revoked on"), 60_000);

    test("password users log in on the same gateway, without a certificate", async () => {
      const { oc, state } = openconnect("alice", { user: "alice", password: "alice-pass-3", flags: ["--authgroup", "staff"] });
      await waitForScript(state, "connect");
      expect(run(topology.client, ["ping", "-c", "1", "-W", "2", topology.lanHost])).toContain("1 received");
      oc.child.kill("SIGINT");
      await oc.exited;
      expect(gw.process.stderr()).not.toMatch(/request failed|internal error/);
    }, 60_000);

    // Last: carol's certificate is revoked from here on.
    test("a reload reads the CRL again: a certificate revoked since is refused, without a restart", async () => {
      const carolSerial = new X509Certificate(readFileSync(pem("carol").cert)).serialNumber;
      gwOk(["pki", "crl", "--ca", join(pki, "ca"), "--revoke", revokedSerial, "--revoke", carolSerial, "--out", join(pki, "crl.pem")]);
      gw.process.child.kill("SIGHUP");
      await gw.process.waitFor(/reload: .*clientCa=reloaded/);
      await expectRefused("carol-revoked", pem("carol"), "was revoked on");
    }, 60_000);
  });
}
