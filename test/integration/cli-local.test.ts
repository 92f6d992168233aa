/**
 * The real `gw` CLI (sources and dist/gw) on a data directory with no server: provisioning,
 * human tables and --json, the token secret alone on stdout, exit codes 0/1/2 and the
 * `gw: <code>: <message>` error line, and the audit log of it all. No root needed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gwArgv, gwCli, repoRoot, type GwVariant } from "../harness/gateway.ts";

const variants: GwVariant[] = ["sources", "binary"];
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

for (const variant of variants) {
  describe.skipIf(variant === "binary" && !existsSync(join(repoRoot, "dist/gw")))(`gw CLI on a data directory (${variant})`, () => {
    const dir = mkdtempSync(join(tmpdir(), `gw-cli-${variant}-`));
    dirs.push(dir);
    const gw = (args: string[], input?: string) => gwCli(variant, [...args, "--data-dir", dir], input);
    // Only gw init (or gw serve) creates a data directory: the CLI refuses a missing one.
    beforeAll(() => expect(gw(["init"])).toMatchObject({ code: 0 }));

    test("groups and users: add, list (table and JSON), show, set, disable, enable, passwd, del", () => {
      expect(gw(["group", "add", "staff", "--route", "198.51.100.0/24", "--dns", "198.51.100.53", "--idle-timeout", "600"])).toMatchObject({ code: 0 });
      const added = gw(["user", "add", "alice", "--group", "staff", "--password-stdin", "--static-address", "10.10.0.50"], "pw-1\n");
      expect(added).toMatchObject({ code: 0, stdout: "" });
      expect(gw(["user", "add", "bob"]).code).toBe(0);
      const table = gw(["user", "list"]).stdout.split("\n");
      expect(table[0]).toMatch(/^NAME +GROUPS +STATE +PASSWORD +ADDRESS +OTP +FAILED-LOGINS +LAST-LOGIN$/);
      expect(table[1]).toMatch(/^alice +staff +enabled +set +10\.10\.0\.50 +- +0 +-$/);
      expect(table[2]).toMatch(/^bob +- +enabled +none +- +- +0 +-$/);
      const json = JSON.parse(gw(["user", "show", "alice", "--json"]).stdout);
      expect(json).toMatchObject({ name: "alice", groups: ["staff"], hasPassword: true, staticAddress: "10.10.0.50" });
      expect(json.password).toBeUndefined();
      expect(gw(["user", "set", "alice", "--static-address", "none", "--route", "192.0.2.0/24"]).code).toBe(0);
      expect(JSON.parse(gw(["user", "show", "alice", "--json"]).stdout)).toMatchObject({ routes: ["192.0.2.0/24"] });
      expect(gw(["user", "disable", "alice"]).code).toBe(0);
      expect(JSON.parse(gw(["user", "show", "alice", "--json"]).stdout).disabled).toBe(true);
      expect(gw(["user", "enable", "alice"]).code).toBe(0);
      expect(gw(["user", "passwd", "bob"], "pw-2\n").code).toBe(0);
      expect(JSON.parse(gw(["user", "show", "bob", "--json"]).stdout).hasPassword).toBe(true);
      expect(gw(["group", "set", "staff", "--mtu", "1300", "--unset", "idle-timeout"]).code).toBe(0);
      expect(JSON.parse(gw(["group", "show", "staff", "--json"]).stdout).policy).toEqual({ routes: ["198.51.100.0/24"], excludeRoutes: [], dns: ["198.51.100.53"], mtu: 1300 });
      expect(gw(["group", "list"]).stdout).toMatch(/^staff +198\.51\.100\.0\/24 +- +198\.51\.100\.53 +- +password +1$/m);
      const inUse = gw(["group", "del", "staff"]);
      expect(inUse.code).toBe(1);
      expect(inUse.stderr.trim()).toBe("gw: group_in_use: group staff still has members (alice): remove them from it first");
      expect(gw(["user", "del", "bob"]).code).toBe(0);
      const again = gw(["user", "del", "bob"]);
      expect(again.code).toBe(1);
      expect(again.stderr.trim()).toBe("gw: user_not_found: no user named bob: 'gw user list' shows the users");
    }, 60_000);

    test("tokens: the secret alone on stdout, list without secrets, revoke", () => {
      const created = gw(["token", "create", "ci", "--scope", "admin", "--expires", "30d"]);
      expect(created.code).toBe(0);
      expect(created.stdout).toMatch(/^gw_[A-Za-z0-9_-]{43}\n$/);
      const list = gw(["token", "list", "--json"]);
      expect(JSON.parse(list.stdout).map((t: { name: string; scope: string }) => `${t.name}:${t.scope}`)).toEqual(["ci:admin"]);
      expect(list.stdout).not.toContain(created.stdout.trim());
      expect(gw(["token", "revoke", "ci"]).code).toBe(0);
      expect(gw(["token", "revoke", "ci"]).code).toBe(1);
    }, 60_000);

    test("config: get, a bad document refused with every path and nothing changed, set, check", () => {
      const before = gw(["config", "get"]).stdout;
      expect(JSON.parse(before)).toMatchObject({ port: 443, apiListen: "127.0.0.1:8443", apiOnTunnel: true, pool: "10.10.0.0/24" });
      const badFile = join(dir, "bad.json");
      writeFileSync(badFile, JSON.stringify({ ...JSON.parse(before), port: "443", pool: "10.10.0.1/24", extra: true }));
      const bad = gw(["config", "set", badFile]);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/^gw: invalid_input: invalid configuration: /);
      for (const path of ["port:", "pool:", "extra: unknown field"]) expect(bad.stderr).toContain(path);
      expect(gw(["config", "get"]).stdout).toBe(before);
      expect(gw(["config", "check", badFile]).code).toBe(1);
      const good = JSON.stringify({ ...JSON.parse(before), mtu: 1300 });
      expect(gw(["config", "check", "-"], good)).toMatchObject({ code: 0, stdout: "valid\n" });
      expect(gw(["config", "set", "-"], good).code).toBe(0);
      expect(JSON.parse(gw(["config", "get"]).stdout).mtu).toBe(1300);
      expect(gw(["config", "set", join(dir, "missing.json")]).code).toBe(1);
    }, 60_000);

    test("status, connections and events without a server", () => {
      expect(gw(["status"]).stdout).toContain("not running (answered from the data directory)");
      expect(JSON.parse(gw(["connections", "list", "--json"]).stdout)).toEqual({ total: 0, items: [] });
      const events = gw(["events"]);
      expect(events.code).toBe(1);
      expect(events.stderr.trim()).toBe("gw: not_running: events come from the running server: start 'gw serve' first");
    }, 60_000);

    test("usage errors exit 2", () => {
      for (const args of [["user", "add", "x", "--colour", "red"], ["token", "create", "x", "--scope", "root"], ["group", "set", "staff"], ["token", "create", "x", "--scope", "read", "--expires", "soon"], ["status", "--url", "https://127.0.0.1:1"]]) {
        const r = gw(args);
        expect({ args, code: r.code }).toEqual({ args, code: 2 });
        expect(r.stderr).toMatch(/^gw: usage: /);
      }
    }, 60_000);

    test("the audit log names local-cli for every change, in order", () => {
      const audit = JSON.parse(gw(["audit", "--json", "--limit", "1000", "--oldest-first"]).stdout) as { actor: string; action: string; target: string }[];
      expect(new Set(audit.map((a) => a.actor))).toEqual(new Set(["local-cli"]));
      expect(audit.map((a) => `${a.action} ${a.target}`).slice(0, 3)).toEqual(["group.create staff", "user.create alice", "user.create bob"]);
      expect(audit.map((a) => a.action)).toContain("config.update");
      expect(audit.map((a) => a.action)).toContain("token.revoke");
      expect(gw(["audit"]).stdout.split("\n")[0]).toMatch(/^ID +WHEN +WHO +WHAT +TARGET$/);
    }, 60_000);

    test("colour only on a terminal: a usage error is coloured on a pseudo-terminal, plain in a pipe and under NO_COLOR", () => {
      const command = [...gwArgv(variant), "user", "add", "--data-dir", dir].map((w) => `'${w}'`).join(" ");
      const onTerminal = (env: Record<string, string>) =>
        spawnSync("script", ["-qec", command, "/dev/null"], { encoding: "utf8", env: { ...process.env, ...env } }).stdout;
      expect(onTerminal({})).toContain("gw: usage: Missing required positional argument: NAME");
      expect(onTerminal({})).toContain("\x1b[");
      expect(onTerminal({ NO_COLOR: "1" })).not.toContain("\x1b[");
      const piped = gw(["user", "add"]);
      expect(piped.code).toBe(2);
      expect(piped.stderr + piped.stdout).not.toContain("\x1b[");
    });

    test("gw audit shows the newest entries first; --oldest-first pages forward", () => {
      const newest = JSON.parse(gw(["audit", "--json", "--limit", "3"]).stdout) as { id: number }[];
      const all = JSON.parse(gw(["audit", "--json", "--limit", "1000", "--oldest-first"]).stdout) as { id: number }[];
      expect(newest.map((e) => e.id)).toEqual(all.slice(-3).map((e) => e.id).reverse());
      const rows = gw(["audit"]).stdout.split("\n").slice(1).filter(Boolean);
      expect(rows[0]!.split(/ +/)[0]).toBe(String(all.at(-1)!.id));
    }, 60_000);
  });
}
