/**
 * SAML single sign-on end to end: Debian's openconnect 9.01 with --external-browser pointed at
 * a script (no real browser) that goes through the test IdP (its own key, signed assertions, an
 * HTTP server in the gateway namespace) and the gateway's ACS, and hands the encrypted token to
 * openconnect on localhost:29786. Success pings the lan host; each refusal reaches openconnect
 * as the gateway's message. Runs against the sources and the compiled dist/gw, and against
 * `--workers 2`, where a worker process passes SAML's pages to the main process's service provider.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { gwCli, repoRoot, startGw, tempDir, type GwVariant, type RunningGw } from "../harness/gateway.ts";
import { clientScript, startOpenconnect, waitForScript } from "../harness/openconnect.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup, type Started } from "../harness/processes.ts";
import { createTopology, type Topology } from "../harness/topology.ts";

const IDP_PORT = 8089;
const browser = join(repoRoot, "test/e2e/fixtures/sso-browser.sh");

const cases: { variant: GwVariant; tag: string; flags: string[]; label: string }[] = [
  { variant: "sources", tag: "ss", flags: [], label: "sources" },
  { variant: "binary", tag: "sb", flags: [], label: "binary" },
  { variant: "sources", tag: "sw", flags: ["--workers", "2"], label: "sources, --workers 2" },
];

for (const { variant, tag, flags, label } of cases) {
  describe.skipIf(!e2eAvailable(variant))(`openconnect SAML external-browser login against gw (${label})`, () => {
    let topology: Topology;
    let procs: ProcessGroup;
    let gw: RunningGw;
    let work: string;
    const run = (ns: string, argv: string[]) => execFileSync(topology.exec(ns)[0]!, [...topology.exec(ns).slice(1), ...argv], { encoding: "utf8", timeout: 60_000 });

    beforeAll(async () => {
      topology = createTopology(tag);
      procs = new ProcessGroup();
      work = tempDir(`saml-${tag}`);
      const dataDir = join(work, "data");
      const idpDir = join(work, "idp");
      const cli = (args: string[], input?: string) => {
        const r = gwCli(variant, [...args, "--data-dir", dataDir], input);
        if (r.code !== 0) throw new Error(`gw ${args.join(" ")} failed: ${r.stderr}`);
        return r.stdout;
      };
      cli(["init"]); // the CLI never creates a data directory
      cli(["group", "add", "sso", "--auth", "saml", "--route", "198.51.100.0/24"]);
      cli(["group", "add", "staff", "--route", "198.51.100.0/24"]);
      cli(["user", "add", "alice", "--group", "sso"]);
      cli(["user", "add", "bob", "--group", "staff", "--password-stdin"], "bob-pass-1\n");
      // Refusals are the point here: keep the brute-force guard out of the way.
      const settings = JSON.parse(cli(["config", "get"]));
      cli(["config", "set", "-"], JSON.stringify({ ...settings, loginMaxFailuresPerIp: 1000, loginMaxFailuresPerUser: 1000 }));

      const idp = procs.start([...topology.exec(topology.gateway), process.execPath, join(repoRoot, "test/e2e/fixtures/test-idp.ts"), "serve", String(IDP_PORT), idpDir]);
      await idp.waitFor("listening");
      gw = await startGw(variant, topology, procs, dataDir, [
        "--saml-idp-url", `http://${topology.gatewayOutside}:${IDP_PORT}/sso`,
        "--saml-idp-cert", join(idpDir, "idp.crt"),
        "--saml-base-url", `https://${topology.gatewayOutside}`,
        ...flags,
      ]);
      if (flags.includes("--workers")) expect(gw.process.stderr()).toContain("2 worker processes");
    }, 120_000);

    afterAll(async () => {
      await procs?.stopAll();
      topology?.destroy();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    const stateDir = (name: string) => {
      const dir = join(work, name);
      mkdirSync(dir, { recursive: true });
      return dir;
    };

    /** openconnect for the sso group, its browser steered by `env`. */
    function openconnect(state: string, env: Record<string, string> = {}): Started {
      return procs.start(
        [
          ...topology.exec(topology.client),
          "openconnect", "--protocol=anyconnect", "--non-inter",
          "--servercert", gw.pin,
          "--script", clientScript,
          "--interface", "oc0",
          "--no-dtls",
          "--authgroup", "sso",
          "--external-browser", browser,
          `https://${topology.gatewayOutside}/`,
        ],
        { env: { GW_E2E_STATE: state, GW_E2E_BUN: process.execPath, ...env } },
      );
    }

    async function refused(name: string, env: Record<string, string>, message: string | RegExp): Promise<void> {
      const state = stateDir(name);
      const oc = openconnect(state, env);
      const code = await Promise.race([oc.exited, Bun.sleep(30_000).then(() => "timeout" as const)]);
      const output = oc.stdout() + oc.stderr();
      expect(code, `${output}\n--- browser\n${browserLog(state)}`).not.toBe("timeout");
      expect(code).not.toBe(0);
      if (typeof message === "string") expect(output).toContain(message);
      else expect(output).toMatch(message);
      expect(existsSync(join(state, "connect.env"))).toBe(false);
    }

    const browserLog = (state: string) => (existsSync(join(state, "browser.log")) ? readFileSync(join(state, "browser.log"), "utf8") : "(none)");
    let firstResponse = "";

    test("alice logs in through the IdP in the external browser, gets the tunnel and pings the lan host", async () => {
      const state = stateDir("ok");
      const oc = openconnect(state);
      try {
        const env = await waitForScript(state, "connect", 30_000);
        expect(env.get("INTERNAL_IP4_ADDRESS")).toMatch(/^10\.10\.0\.\d+$/);
      } catch (e) {
        throw new Error(`${(e as Error).message}\n--- openconnect\n${oc.stdout()}${oc.stderr()}\n--- browser\n${browserLog(state)}\n--- gw\n${gw.process.stderr()}`);
      }
      expect(browserLog(state)).toMatch(/acs 302/);
      expect(browserLog(state)).toMatch(/localhost 302 -> https:\/\/203\.0\.113\.1\/\+CSCOE\+\/saml_ac_login\.html/);
      expect(run(topology.client, ["ping", "-c", "3", "-W", "2", topology.lanHost])).toContain("3 received");
      await gw.process.waitFor(/login ok user=alice group=sso/);
      firstResponse = join(state, "saml-response.b64");
      oc.child.kill("SIGINT");
      await oc.exited;
    }, 60_000);

    test("a tampered assertion (NameID changed after signing) is refused with the reason", async () => {
      await refused("tampered", { SAML_TAMPER: "1" }, /Single sign-on failed: .*signature/i);
    }, 40_000);

    test("a replayed assertion (the first login's response, posted again) is refused", async () => {
      expect(existsSync(firstResponse)).toBe(true);
      await refused("replay", { SAML_REPLAY: firstResponse }, /Single sign-on failed: .*(InResponseTo|used already)/);
    }, 40_000);

    test("an assertion for another audience is refused", async () => {
      await refused("audience", { SAML_MODE: "wrong-audience" }, /Single sign-on failed: .*audience/);
    }, 40_000);

    test("an expired assertion is refused", async () => {
      await refused("expired", { SAML_MODE: "expired" }, /Single sign-on failed: .*(expired|subject confirmation)/i);
    }, 40_000);

    test("an IdP user unknown to gw is refused", async () => {
      await refused("unknown", { SAML_USER: "zed" }, "User zed is not known to this gateway");
      expect(gw.process.stderr() + gw.process.stdout()).toContain("saml assertion refused");
    }, 40_000);

    test("a password group on the same gateway still logs in with its password", async () => {
      const state = stateDir("bob");
      const oc = startOpenconnect(topology, procs, { user: "bob", password: "bob-pass-1", pin: gw.pin, stateDir: state, flags: ["--no-dtls", "--authgroup", "staff"] });
      await waitForScript(state, "connect", 30_000);
      expect(run(topology.client, ["ping", "-c", "1", "-W", "2", topology.lanHost])).toContain("1 received");
      oc.child.kill("SIGINT");
      await oc.exited;
    }, 40_000);
  });
}
