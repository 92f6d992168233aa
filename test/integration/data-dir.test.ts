/**
 * A careful start (issue 8, items 5-7): the data directory is 0700 with every file 0600 (made so
 * by `gw init` and fixed by `gw serve` with one log line); the CLI never creates a data directory;
 * one server per data directory (flock on gw.lock), and the CLI never writes the store beside a
 * running server it cannot reach; the management API listens on loopback and the tunnel address
 * only, never on the gateway's other addresses.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { gwArgv, gwCli } from "../harness/gateway.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createLoopbackNamespace } from "../harness/topology.ts";

const work = mkdtempSync(join(tmpdir(), "gw-datadir-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const modes = (dir: string) => ({
  [dir]: (statSync(dir).mode & 0o777).toString(8),
  ...Object.fromEntries(readdirSync(dir).map((f) => [f, (statSync(join(dir, f)).mode & 0o777).toString(8)])),
});

describe("gw init and the CLI's data directory", () => {
  test("gw init creates the directory 0700 with its store 0600, and says where", () => {
    const dir = join(work, "fresh");
    const r = gwCli("sources", ["init", "--data-dir", dir]);
    expect(r).toMatchObject({ code: 0, stdout: `created the gw data directory at ${dir} (mode 0700, store gw.db)\n` });
    expect(modes(dir)).toEqual({ [dir]: "700", "gw.db": "600" });
    expect(gwCli("sources", ["group", "add", "staff", "--data-dir", dir]).code).toBe(0);
  });

  test("gw init on an existing, loose directory changes no data, says so and fixes the modes", () => {
    const dir = join(work, "loose-init");
    expect(gwCli("sources", ["init", "--data-dir", dir]).code).toBe(0);
    expect(gwCli("sources", ["group", "add", "staff", "--data-dir", dir]).code).toBe(0);
    chmodSync(dir, 0o755);
    chmodSync(join(dir, "gw.db"), 0o644);
    const r = gwCli("sources", ["init", "--data-dir", dir]);
    expect(r).toMatchObject({ code: 0, stdout: `gw data directory at ${dir} already exists, nothing created; fixed modes readable by other users: ${dir} 755->700, gw.db 644->600\n` });
    expect(modes(dir)).toMatchObject({ [dir]: "700", "gw.db": "600" });
    expect(JSON.parse(gwCli("sources", ["group", "list", "--json", "--data-dir", dir]).stdout).map((g: { name: string }) => g.name)).toEqual(["staff"]);
  });

  test("any other command on a missing directory fails with no_data_dir and creates nothing", () => {
    const cwd = join(work, "elsewhere");
    mkdirSync(cwd);
    for (const args of [["user", "add", "alice"], ["status"], ["config", "get"]]) {
      const r = spawnSync(gwArgv("sources")[0]!, [...gwArgv("sources").slice(1), ...args], { cwd, encoding: "utf8", env: { ...process.env, GW_DATA_DIR: "" } });
      expect({ args, code: r.status, stderr: r.stderr }).toEqual({
        args,
        code: 1,
        stderr: `gw: no_data_dir: no gw data directory at ${join(cwd, "gw-data")}: run gw init (or gw serve) first, or pass --data-dir / GW_DATA_DIR\n`,
      });
    }
    const explicit = gwCli("sources", ["user", "list", "--data-dir", join(work, "typo")]);
    expect(explicit.code).toBe(1);
    expect(explicit.stderr).toStartWith("gw: no_data_dir: ");
    expect(readdirSync(cwd)).toEqual([]);
    expect(existsSync(join(work, "typo"))).toBe(false);
  });
});

describe.skipIf(!e2eAvailable())("gw serve: modes, one server per data directory, API listeners", () => {
  let ns = "";
  let namespace: ReturnType<typeof createLoopbackNamespace> | undefined;
  const procs = new ProcessGroup();

  beforeAll(() => {
    namespace = createLoopbackNamespace("dd");
    ns = namespace.name;
    // Another address of the gateway: the management API must not answer there.
    execFileSync("ip", ["-n", ns, "addr", "add", "198.51.100.1/32", "dev", "lo"]);
  });

  afterAll(async () => {
    await procs.stopAll();
    namespace?.destroy();
  });

  /** gw inside the namespace, to completion. */
  const inNs = (args: string[]) => {
    const r = spawnSync("ip", ["netns", "exec", ns, ...gwArgv("sources"), ...args], { encoding: "utf8", timeout: 30_000 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  /** "HTTP <status>" when the management API answers at address:port, "refused" otherwise. */
  const probe = (hostPort: string) => {
    const script = `fetch("https://${hostPort}/api/v1/status", { tls: { rejectUnauthorized: false } }).then((r) => console.log("HTTP " + r.status), () => console.log("refused"))`;
    return execFileSync("ip", ["netns", "exec", ns, process.execPath, "-e", script], { encoding: "utf8" }).trim();
  };

  test("a loose data directory is fixed at start with one log line; every file the server writes is 0600", async () => {
    // As the old CLI left it: a 0755 directory with a 0644 store.
    const dir = join(work, "loose-serve");
    expect(gwCli("sources", ["init", "--data-dir", dir]).code).toBe(0);
    chmodSync(dir, 0o755);
    chmodSync(join(dir, "gw.db"), 0o644);
    const server = procs.start(["ip", "netns", "exec", ns, ...gwArgv("sources"), "serve", "--data-dir", dir, "--tun", "gwdd1", "--pool", "10.41.0.0/24"]);
    await server.waitFor("server certificate pin: ");
    expect(server.stderr()).toContain(`data directory ${dir}: fixed modes readable by other users: ${dir} 755->700, gw.db 644->600\n`);
    expect(server.stderr().match(/fixed modes/g)).toHaveLength(1);
    const files = modes(dir);
    expect(Object.keys(files).sort()).toEqual([dir, "api.json", "gw.db", "gw.db-shm", "gw.db-wal", "gw.lock", "server-cert.pem", "server-key.pem"].sort());
    expect(files).toEqual(Object.fromEntries(Object.keys(files).map((f) => [f, f === dir ? "700" : "600"])));
    server.child.kill("SIGTERM");
    expect(await server.exited).toBe(0);
  }, 60_000);

  test("the management API: loopback and the tunnel address by default, never the gateway's other addresses", async () => {
    const dir = join(work, "listeners");
    const server = procs.start(["ip", "netns", "exec", ns, ...gwArgv("sources"), "serve", "--data-dir", dir, "--tun", "gwdd1", "--pool", "10.41.0.0/24"]);
    await server.waitFor("server certificate pin: ");
    expect(server.stdout()).toContain("management API listens on: 127.0.0.1:8443, 10.41.0.1:8443 (tunnel address)\n");
    expect(server.stdout()).toContain("web UI: https://127.0.0.1:8443/ui (in a browser");
    expect(server.stderr()).toMatch(/ready: .*, management API on "127\.0\.0\.1:8443, 10\.41\.0\.1:8443 \(tunnel address\)", sessions up to \d+/);
    expect(probe("127.0.0.1:8443")).toBe("HTTP 401");
    expect(probe("10.41.0.1:8443")).toBe("HTTP 401");
    expect(probe("198.51.100.1:8443")).toBe("refused");
    expect(JSON.parse(inNs(["status", "--json", "--data-dir", dir]).stdout).listeners.api).toMatchObject({ host: "127.0.0.1", port: 8443, addresses: ["127.0.0.1:8443", "10.41.0.1:8443"] });
    server.child.kill("SIGTERM");
    expect(await server.exited).toBe(0);

    // --no-api-on-tunnel: loopback only.
    const only = procs.start(["ip", "netns", "exec", ns, ...gwArgv("sources"), "serve", "--data-dir", dir, "--tun", "gwdd1", "--pool", "10.41.0.0/24", "--no-api-on-tunnel"]);
    await only.waitFor("server certificate pin: ");
    expect(only.stdout()).toContain("management API listens on: 127.0.0.1:8443\n");
    expect(probe("127.0.0.1:8443")).toBe("HTTP 401");
    expect(probe("10.41.0.1:8443")).toBe("refused");
    only.child.kill("SIGTERM");
    expect(await only.exited).toBe(0);
  }, 60_000);

  test("a second gw serve on the same directory stops before touching anything; the CLI keeps reaching the first", async () => {
    const dir = join(work, "shared");
    const first = procs.start(["ip", "netns", "exec", ns, ...gwArgv("sources"), "serve", "--data-dir", dir, "--tun", "gwdd1", "--pool", "10.41.0.0/24"]);
    await first.waitFor("server certificate pin: ");
    const discovery = readFileSync(join(dir, "api.json"), "utf8");
    // Other ports, TUN and pool: only the data directory is shared.
    const second = inNs(["serve", "--data-dir", dir, "--port", "1443", "--api-listen", "127.0.0.1:9443", "--tun", "gwdd2", "--pool", "10.42.0.0/24"]);
    expect({ code: second.code, stderr: second.stderr }).toEqual({
      code: 1,
      stderr: `gw: data_dir_in_use: ${dir} is in use by gw serve (pid ${first.child.pid}): stop it first or choose another --data-dir\n`,
    });
    expect(execFileSync("ip", ["-n", ns, "-o", "link"], { encoding: "utf8" })).not.toContain("gwdd2");
    expect(readFileSync(join(dir, "api.json"), "utf8")).toBe(discovery);
    expect(inNs(["user", "add", "alice", "--data-dir", dir])).toMatchObject({ code: 0 });
    expect(JSON.parse(inNs(["status", "--json", "--data-dir", dir]).stdout).running).toBe(true);
    expect(first.child.exitCode).toBeNull();

    // Lock held, api.json gone: every command fails, naming the server; the store is untouched.
    rmSync(join(dir, "api.json"));
    for (const args of [["user", "disable", "alice"], ["user", "list"], ["status"]]) {
      const r = inNs([...args, "--data-dir", dir]);
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 1, stdout: "" });
      expect(r.stderr).toStartWith(`gw: server_unreachable: gw serve (pid ${first.child.pid}) runs on ${dir} but its api.json is missing or unreadable: `);
      expect(r.stderr).toContain("nothing was changed");
    }
    const db = new DatabaseSync(join(dir, "gw.db"), { readOnly: true });
    try {
      expect(db.prepare("SELECT disabled FROM users WHERE name = 'alice'").get()).toEqual({ disabled: 0 });
      expect(db.prepare("SELECT count(*) AS n FROM audit WHERE actor = 'local-cli' AND action = 'user.update'").get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }

    // Once it stops, the lock is free: the CLI works on the store again.
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(inNs(["user", "disable", "alice", "--data-dir", dir])).toMatchObject({ code: 0 });
  }, 60_000);
});
