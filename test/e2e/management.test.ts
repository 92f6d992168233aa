/**
 * The management plane end to end: the real `gw` (sources and dist/gw) as a CLI in local mode,
 * through the running server's api.json, and remotely with --url/--token/--pin; and a user
 * disabled through the API while openconnect is connected: the session ends, the event is on
 * the SSE stream, the audit log records it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { gwArgv, gwCli, startGw, tempDir, type GwVariant, type RunningGw } from "../harness/gateway.ts";
import { startOpenconnect, waitForScript } from "../harness/openconnect.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createTopology, type Topology } from "../harness/topology.ts";

const variants: GwVariant[] = ["sources", "binary"];

for (const variant of variants) {
  describe.skipIf(!e2eAvailable(variant))(`gw management CLI and API (${variant})`, () => {
    let topology: Topology;
    let procs: ProcessGroup;
    let gw: RunningGw;
    let work: string;
    let dataDir: string;
    let adminToken: string;
    const url = "https://127.0.0.1:8443";

    /** Runs gw to completion inside the gateway namespace (where the API listens). */
    const inGw = (args: string[], input?: string, env: Record<string, string> = {}) => {
      try {
        const stdout = execFileSync(topology.exec(topology.gateway)[0]!, [...topology.exec(topology.gateway).slice(1), ...gwArgv(variant), ...args], {
          input,
          encoding: "utf8",
          stdio: ["pipe", "pipe", "pipe"],
          env: { ...process.env, GW_URL: "", GW_TOKEN: "", GW_PIN: "", GW_INSECURE: "", ...env },
          timeout: 60_000,
        });
        return { code: 0, stdout, stderr: "" };
      } catch (e) {
        const x = e as { status: number; stdout: string; stderr: string };
        return { code: x.status, stdout: x.stdout, stderr: x.stderr };
      }
    };
    const remote = (args: string[], input?: string) => inGw([...args, "--url", url, "--token", adminToken, "--pin", gw.pin], input);
    const ok = (r: { code: number; stdout: string; stderr: string }) => {
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
      return r.stdout;
    };

    beforeAll(async () => {
      topology = createTopology(variant === "sources" ? "ms" : "mb");
      procs = new ProcessGroup();
      work = tempDir(`mgmt-${variant}`);
      dataDir = join(work, "data");
      gw = await startGw(variant, topology, procs, dataDir);
      adminToken = /admin API token \(shown once; store it now\): (gw_\S+)/.exec(gw.process.stdout())?.[1] ?? "";
      expect(adminToken).toMatch(/^gw_/);
    }, 90_000);

    afterAll(async () => {
      await procs?.stopAll();
      topology?.destroy();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    test("the server writes a 0600 api.json; the CLI on the same host uses it; where it cannot reach it, the CLI refuses", () => {
      const file = join(dataDir, "api.json");
      expect(existsSync(file)).toBe(true);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      // Inside the namespace the server answers: the live status.
      expect(JSON.parse(ok(inGw(["status", "--json", "--data-dir", dataDir]))).running).toBe(true);
      // Outside it (no route to that loopback) the server runs but cannot be reached: the CLI
      // says so and never answers from (or writes to) the store beside it.
      const outside = gwCli(variant, ["status", "--json", "--data-dir", dataDir]);
      expect(outside.code).toBe(1);
      expect(outside.stderr).toStartWith(`gw: server_unreachable: gw serve (pid ${gw.process.child.pid}) runs on ${dataDir} but its management API at https://127.0.0.1:8443 does not answer`);
    });

    test("remote mode: provisioning with --url/--token/--pin, human tables and --json, exit codes and error lines", () => {
      ok(remote(["group", "add", "staff", "--route", "198.51.100.0/24", "--dns", "198.51.100.53", "--max-sessions", "3"]));
      ok(remote(["user", "add", "alice", "--group", "staff", "--password-stdin"], "alice-pass-1\n"));
      ok(remote(["user", "add", "bob", "--group", "staff"]));
      const table = ok(remote(["user", "list"]));
      expect(table.split("\n")[0]).toMatch(/^NAME\s+GROUPS\s+STATE/);
      expect(table).toMatch(/alice\s+staff\s+enabled\s+set/);
      const users = JSON.parse(ok(remote(["user", "list", "--json"])));
      expect(users.map((u: { name: string }) => u.name)).toEqual(["alice", "bob"]);
      expect(JSON.parse(ok(remote(["group", "show", "staff", "--json"]))).policy.maxSessionsPerUser).toBe(3);
      const status = JSON.parse(ok(remote(["status", "--json"])));
      expect(status).toMatchObject({ running: true, listeners: { api: { port: 8443 } }, tun: { state: "up" } });

      // The token's secret alone on stdout, for TOKEN=$(gw token create ...).
      const reader = ok(remote(["token", "create", "ci", "--scope", "read", "--expires", "30d"])).trim();
      expect(reader).toMatch(/^gw_[A-Za-z0-9_-]{43}$/);
      const denied = inGw(["user", "del", "bob", "--url", url, "--token", reader, "--pin", gw.pin]);
      expect(denied.code).toBe(1);
      expect(denied.stderr.trim()).toMatch(/^gw: forbidden: token ci has scope read/);
      expect(JSON.parse(ok(inGw(["user", "list", "--json", "--url", url, "--token", reader, "--insecure"])))).toHaveLength(2);
      // The same through the environment, with the pin in its sha256/ form.
      const viaEnv = inGw(["user", "list", "--json"], undefined, { GW_URL: url, GW_TOKEN: reader, GW_PIN: gw.pin.replace("pin-sha256:", "sha256/") });
      expect(JSON.parse(ok(viaEnv))).toHaveLength(2);
      expect(JSON.parse(ok(inGw(["status", "--json"], undefined, { GW_URL: url, GW_TOKEN: reader, GW_INSECURE: "1" }))).running).toBe(true);

      // Errors carry the API's codes; usage errors exit 2.
      const missing = remote(["user", "show", "nobody"]);
      expect(missing.code).toBe(1);
      expect(missing.stderr.trim()).toBe("gw: user_not_found: no user named nobody: 'gw user list' shows the users");
      const bad = remote(["group", "add", "x", "--mtu", "5"]);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain("gw: invalid_input: invalid body: policy.mtu:");
      expect(remote(["token", "create", "x", "--scope", "root"]).code).toBe(2);
      expect(inGw(["status", "--url", url]).code).toBe(2);

      // TLS: the self-signed certificate is refused without --pin or --insecure; a wrong pin is refused.
      const untrusted = inGw(["status", "--url", url, "--token", adminToken]);
      expect(untrusted.code).toBe(1);
      expect(untrusted.stderr).toMatch(/^gw: tls_untrusted: .*--pin/);
      const wrongPin = inGw(["status", "--url", url, "--token", adminToken, "--pin", "pin-sha256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]);
      expect(wrongPin.code).toBe(1);
      expect(wrongPin.stderr).toMatch(/^gw: pin_mismatch: /);
      const badToken = inGw(["status", "--url", url, "--token", "gw_nope", "--pin", gw.pin]);
      expect(badToken.code).toBe(1);
      expect(badToken.stderr).toMatch(/^gw: unauthorized: /);

      // Plain HTTP: the CLI refuses it, and the port speaks only TLS.
      const plain = inGw(["status", "--url", "http://127.0.0.1:8443", "--token", adminToken]);
      expect(plain.code).toBe(2);
      const probe = `fetch("http://127.0.0.1:8443/api/v1/status").then((r) => console.log("HTTP " + r.status), () => console.log("refused"))`;
      const answer = execFileSync(topology.exec(topology.gateway)[0]!, [...topology.exec(topology.gateway).slice(1), process.execPath, "-e", probe], { encoding: "utf8" });
      expect(answer.trim()).toBe("refused");

      // Config: a bad document is refused with its paths and changes nothing.
      const before = ok(remote(["config", "get"]));
      const check = remote(["config", "check", "-"], JSON.stringify({ port: 0, colour: 1 }));
      expect(check.code).toBe(1);
      expect(check.stderr).toContain("port:");
      expect(check.stderr).toContain("colour: unknown field");
      expect(ok(remote(["config", "get"]))).toBe(before);
      const next = { ...JSON.parse(before), mtu: 1300, pool: "10.10.0.0/23" };
      const set = remote(["config", "set", "-", "--json"], JSON.stringify(next));
      expect(JSON.parse(ok(set))).toMatchObject({ restartRequired: ["pool"] });
    }, 120_000);

    test("a user disabled through the API while connected: openconnect exits, the event is streamed, the audit log has it", async () => {
      const state = join(work, "alice");
      mkdirSync(state, { recursive: true });
      const events = procs.start([...topology.exec(topology.gateway), ...gwArgv(variant), "events", "--json", "--url", url, "--token", adminToken, "--pin", gw.pin]);
      await events.waitFor("following events");
      const oc = startOpenconnect(topology, procs, { user: "alice", password: "alice-pass-1", pin: gw.pin, stateDir: state, flags: ["--no-dtls", "--authgroup", "staff"] });
      const env = await waitForScript(state, "connect");

      const page = JSON.parse(ok(remote(["connections", "list", "--json", "--user", "alice"])));
      expect(page.total).toBe(1);
      const session = page.items[0];
      expect(session).toMatchObject({ user: "alice", group: "staff", state: "connected", channel: "cstp", clientAddress: "203.0.113.2", address: env.get("INTERNAL_IP4_ADDRESS") });
      expect(session.userAgent).toContain("AnyConnect");
      expect(ok(remote(["connections", "show", session.id]))).toContain(`user:`);

      ok(remote(["user", "disable", "alice"]));
      await oc.exited;
      await events.waitFor(/"type":"session.down"[^\n]*"reason":"admin"/);
      const lines = events.stdout().trim().split("\n").map((l) => JSON.parse(l));
      const types = lines.map((e: { type: string }) => e.type);
      expect(types).toContain("auth.success");
      expect(types).toContain("session.up");
      expect(types.indexOf("user.updated")).toBeGreaterThan(types.indexOf("session.up"));
      expect(lines.find((e: { type: string }) => e.type === "session.down")).toMatchObject({ session: session.id, user: "alice", reason: "admin" });

      const audit = JSON.parse(ok(remote(["audit", "--json", "--oldest-first"])));
      const entry = audit.findLast((e: { action: string; target: string }) => e.action === "user.update" && e.target === "alice");
      expect(entry).toMatchObject({ actor: "admin", before: { disabled: false }, after: { disabled: true } });
      expect(JSON.parse(ok(remote(["connections", "list", "--json"]))).total).toBe(0);
      expect(gw.process.stderr()).toMatch(/session ended session=\S+ user=alice reason=admin/);

      // A disabled user cannot log in again.
      const again = startOpenconnect(topology, procs, { user: "alice", password: "alice-pass-1", pin: gw.pin, stateDir: state, interface: "oc9", flags: ["--no-dtls", "--authgroup", "staff"] });
      expect(await again.exited).not.toBe(0);
      expect(again.stderr() + again.stdout()).toContain("disabled");
    }, 90_000);

    test("through api.json the local CLI reaches live sessions: kill a session by id", async () => {
      ok(inGw(["user", "enable", "alice", "--data-dir", dataDir]));
      const state = join(work, "alice2");
      mkdirSync(state, { recursive: true });
      const oc = startOpenconnect(topology, procs, { user: "alice", password: "alice-pass-1", pin: gw.pin, stateDir: state, interface: "oc3", flags: ["--no-dtls", "--authgroup", "staff"] });
      await waitForScript(state, "connect");
      const page = JSON.parse(ok(inGw(["connections", "list", "--json", "--data-dir", dataDir])));
      expect(page.total).toBe(1);
      ok(inGw(["connections", "kill", page.items[0].id, "--data-dir", dataDir]));
      await oc.exited;
      const audit = JSON.parse(ok(inGw(["audit", "--json", "--oldest-first", "--data-dir", dataDir])));
      expect(audit.at(-1)).toMatchObject({ actor: "local-cli", action: "connection.kill", target: page.items[0].id });
    }, 90_000);

    test("over DTLS: the channel change is an event, and status and metrics count the session as DTLS", async () => {
      const state = join(work, "alice-dtls");
      mkdirSync(state, { recursive: true });
      const events = procs.start([...topology.exec(topology.gateway), ...gwArgv(variant), "events", "--json", "--url", url, "--token", adminToken, "--pin", gw.pin]);
      await events.waitFor("following events");
      const human = procs.start([...topology.exec(topology.gateway), ...gwArgv(variant), "events", "--url", url, "--token", adminToken, "--pin", gw.pin]);
      await human.waitFor("following events");
      const oc = startOpenconnect(topology, procs, { user: "alice", password: "alice-pass-1", pin: gw.pin, stateDir: state, interface: "oc4", flags: ["--authgroup", "staff"] });
      await waitForScript(state, "connect");
      await events.waitFor(/"type":"channel.change"[^\n]*"channel":"dtls"/).catch((e) => {
        throw new Error(`${e.message}\n--- gateway\n${gw.process.stderr().slice(-3000)}\n--- openconnect\n${(oc.stderr() + oc.stdout()).slice(-3000)}`);
      });
      const status = JSON.parse(ok(remote(["status", "--json"])));
      expect(status.sessions).toMatchObject({ total: 1, connected: 1, dtls: 1, cstp: 0 });
      const page = JSON.parse(ok(remote(["connections", "list", "--json"])));
      expect(page.items[0]).toMatchObject({ user: "alice", channel: "dtls" });
      expect(page.items[0].cipher).toMatch(/GCM/);
      const table = ok(remote(["connections", "list"])).split("\n");
      expect(table[0]).toMatch(/^ID +USER +GROUP +ADDRESS +CLIENT +CHANNEL +SINCE +BYTES-IN +BYTES-OUT$/);
      expect(table[1]).toMatch(new RegExp(`^${page.items[0].id} +alice +staff +10\\.10\\.0\\.\\d+ +203\\.0\\.113\\.2:\\d+ +dtls `));
      await human.waitFor(new RegExp(`channel.change session=${page.items[0].id} user=alice channel=dtls cipher=\\S+`));
      // Prometheus text, with the token, from inside the gateway's namespace.
      const scrape = `const r = await fetch("${url}/metrics", { headers: { authorization: "Bearer ${adminToken}" }, tls: { rejectUnauthorized: false } }); console.log(r.status); console.log(await r.text());`;
      const metrics = execFileSync(topology.exec(topology.gateway)[0]!, [...topology.exec(topology.gateway).slice(1), process.execPath, "-e", scrape], { encoding: "utf8" });
      expect(metrics.startsWith("200\n")).toBe(true);
      expect(metrics).toContain('gw_sessions_by_channel{channel="dtls"} 1');
      expect(metrics).toContain("gw_dtls_share 1");
      expect(metrics).toMatch(/gw_auth_success_total [1-9]/);
      oc.child.kill("SIGINT");
      await oc.exited;
      await events.waitFor(/"type":"session.down"[^\n]*"reason":"logout"/);
    }, 90_000);

    // Last: it stops the server.
    test("stopping the server removes api.json; the CLI then works on the store", async () => {
      gw.process.child.kill("SIGTERM");
      expect(await gw.process.exited).toBe(0);
      expect(existsSync(join(dataDir, "api.json"))).toBe(false);
      const users = JSON.parse(ok(inGw(["user", "list", "--json", "--data-dir", dataDir])));
      expect(users.map((u: { name: string }) => u.name)).toEqual(["alice", "bob"]);
      expect(JSON.parse(ok(inGw(["status", "--json", "--data-dir", dataDir]))).running).toBe(false);
      // The local-cli token of the stopped server is gone.
      expect(JSON.parse(ok(inGw(["token", "list", "--json", "--data-dir", dataDir]))).map((t: { name: string }) => t.name).sort()).toEqual(["admin", "ci"]);
    }, 60_000);
  });
}
