/**
 * How the stored settings document and `gw serve` flags combine: the document is what the
 * server runs with, a flag overrides it for that run; through the running server, live
 * settings apply at once and the others are reported as needing a restart.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gwArgv } from "../harness/gateway.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createLoopbackNamespace } from "../harness/topology.ts";

let ns = "";
let namespace: ReturnType<typeof createLoopbackNamespace> | undefined;

describe.skipIf(!e2eAvailable())("stored settings and gw serve flags", () => {
  let work: string;
  const procs = new ProcessGroup();

  beforeAll(() => {
    namespace = createLoopbackNamespace("ss");
    ns = namespace.name;
    work = mkdtempSync(join(tmpdir(), "gw-settings-"));
  });

  afterAll(async () => {
    await procs.stopAll();
    namespace?.destroy();
    rmSync(work, { recursive: true, force: true });
  });

  const gw = (args: string[], input?: string) =>
    execFileSync("ip", ["netns", "exec", ns, ...gwArgv("sources"), ...args, "--data-dir", join(work, "data")], { input, encoding: "utf8", timeout: 30_000, stdio: ["pipe", "pipe", "pipe"] });

  test("the document sets tun, pool and API address; a flag wins for its run; PUT reports what needs a restart", async () => {
    gw(["init"]);
    const doc = JSON.parse(gw(["config", "get"]));
    gw(["config", "set", "-"], JSON.stringify({ ...doc, listen: "127.0.0.1", tunName: "gwss1", pool: "10.31.0.0/24", apiListen: "127.0.0.1:9555", dtls: false }));
    const server = procs.start(["ip", "netns", "exec", ns, ...gwArgv("sources"), "serve", "--data-dir", join(work, "data"), "--api-listen", "127.0.0.1:9556"]);
    await server.waitFor("server certificate pin: ");
    expect(server.stdout()).toContain("management API: https://127.0.0.1:9556");
    expect(server.stderr()).toMatch(/ready: TLS on 127\.0\.0\.1:443, no DTLS, tun gwss1 10\.31\.0\.1\/24, pool 10\.31\.0\.0\/24/);

    // Through the running server (api.json): the flag shows in status; a PUT reports the effects.
    const status = JSON.parse(gw(["status", "--json"]));
    expect(status).toMatchObject({ running: true, listeners: { api: { host: "127.0.0.1", port: 9556 } }, tun: { name: "gwss1" }, pool: { cidr: "10.31.0.0/24" } });
    const stored = JSON.parse(gw(["config", "get"]));
    const change = JSON.parse(gw(["config", "set", "-", "--json"], JSON.stringify({ ...stored, apiListen: "127.0.0.1:9557", mtu: 1300, tunName: "gwss2" })));
    expect(change.overriddenByFlags).toEqual(["apiListen"]);
    expect(change.restartRequired).toEqual(["tunName"]);
    expect(JSON.parse(gw(["audit", "--json", "--oldest-first"])).at(-1)).toMatchObject({ actor: "local-cli", action: "config.update" });

    server.child.kill("SIGTERM");
    expect(await server.exited).toBe(0);
    const next = procs.start(["ip", "netns", "exec", ns, ...gwArgv("sources"), "serve", "--data-dir", join(work, "data")]);
    await next.waitFor("server certificate pin: ");
    expect(next.stdout()).toContain("management API: https://127.0.0.1:9557");
    expect(next.stderr()).toContain("tun gwss2");
    next.child.kill("SIGTERM");
    expect(await next.exited).toBe(0);
  }, 60_000);
});
