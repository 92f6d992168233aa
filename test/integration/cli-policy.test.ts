/**
 * The access policy through the real `gw` CLI (sources and dist/gw) on a data directory:
 * rules added, listed and deleted for a group and a user, a shadowed rule flagged, a bad rule
 * refused with its field's path, policy tests refusing a change, `gw policy trace` naming the
 * deciding rule, rate limits, and the audit log of it all. No root needed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gwArgv, repoRoot, type GwVariant } from "../harness/gateway.ts";

const variants: GwVariant[] = ["sources", "binary"];
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

for (const variant of variants) {
  describe.skipIf(variant === "binary" && !existsSync(join(repoRoot, "dist/gw")))(`gw access policy commands (${variant})`, () => {
    const dir = mkdtempSync(join(tmpdir(), `gw-cli-policy-${variant}-`));
    dirs.push(dir);
    // stdout and stderr of every run, failed or not: the warnings are notes on stderr.
    const gw = (...args: string[]) => {
      const argv = [...gwArgv(variant), ...args, "--data-dir", dir];
      const r = spawnSync(argv[0]!, argv.slice(1), { encoding: "utf8" });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    beforeAll(() => {
      expect(gw("init").code).toBe(0);
      expect(gw("group", "add", "staff", "--route", "198.51.100.0/24", "--dns", "198.51.100.53").code).toBe(0);
      expect(gw("user", "add", "alice", "--group", "staff").code).toBe(0);
    });

    test("group rules: the starter rule, add (shadowed warning), list, del; a bad rule refused with its path", () => {
      const start = gw("group", "rule", "list", "staff");
      expect(start.stdout.split("\n")[1]).toMatch(/^1 +allow +outbound +any +0\.0\.0\.0\/0 +- +starter rule/);
      expect(start.stderr).toContain("the starter rule applies");

      const added = gw("group", "rule", "add", "staff", "allow", "--proto", "tcp", "--to", "198.51.100.0/24", "--port", "443", "--description", "intranet web");
      expect(added.code).toBe(0);
      expect(added.stdout.split("\n")[2]).toMatch(/^2 +allow +outbound +tcp +198\.51\.100\.0\/24 +443 +intranet web +shadowed$/);
      expect(added.stderr).toContain("warning: rule 2 (allow tcp 198.51.100.0/24 port 443 (intranet web)) never decides anything: rule 1 (allow any 0.0.0.0/0");

      expect(gw("group", "rule", "del", "staff", "1").code).toBe(0);
      expect(gw("group", "rule", "add", "staff", "allow", "--proto", "udp", "--to", "198.51.100.53/32", "--port", "53").code).toBe(0);
      const list = gw("group", "rule", "list", "staff", "--json");
      expect(JSON.parse(list.stdout)).toEqual({
        rules: [
          { index: 1, rule: { action: "allow", to: "198.51.100.0/24", proto: "tcp", ports: "443", description: "intranet web" } },
          { index: 2, rule: { action: "allow", to: "198.51.100.53/32", proto: "udp", ports: "53" } },
        ],
        starter: false,
        warnings: [],
      });

      const badPort = gw("group", "rule", "add", "staff", "allow", "--port", "443");
      expect(badPort.code).toBe(1);
      expect(badPort.stderr.trim()).toBe("gw: invalid_input: invalid rule: ports: ports apply to tcp or udp only: drop the ports or set proto to tcp or udp (proto is any)");
      const badCidr = gw("group", "rule", "add", "staff", "deny", "--to", "198.51.100.0/33");
      expect(badCidr.code).toBe(1);
      expect(badCidr.stderr).toMatch(/^gw: invalid_input: invalid rule: to: /);
      expect(gw("group", "rule", "add", "staff", "maybe").code).toBe(2);
      const gone = gw("group", "rule", "del", "staff", "9");
      expect([gone.code, gone.stderr.trim()]).toEqual([1, "gw: rule_not_found: group staff has no rule 9 (rules are numbered 1-2): 'gw group rule list staff' shows them"]);
      expect(JSON.parse(gw("group", "rule", "list", "staff", "--json").stdout).rules).toHaveLength(2);
    }, 60_000);

    test("user rules and gw policy trace: the deciding rule is named, the group's or the user's", () => {
      expect(gw("user", "rule", "add", "alice", "allow", "--proto", "tcp", "--to", "198.51.100.22/32", "--port", "22", "--description", "build host").code).toBe(0);
      expect(gw("user", "rule", "list", "alice").stdout.split("\n")[1]).toMatch(/^1 +allow +outbound +tcp +198\.51\.100\.22\/32 +22 +build host$/);

      const ssh = gw("policy", "trace", "alice", "198.51.100.22", "tcp/22");
      expect(ssh.code).toBe(0);
      expect(ssh.stdout).toMatch(/^verdict: +allowed$/m);
      expect(ssh.stdout).toMatch(/^rule: +user rule 1: allow tcp 198\.51\.100\.22\/32 port 22 \(build host\)$/m);
      const web = JSON.parse(gw("policy", "trace", "alice", "198.51.100.10", "tcp/443", "--json").stdout);
      expect(web).toMatchObject({ allowed: true, decidedBy: "rule", rule: { source: "group", index: 1 } });
      const denied = gw("policy", "trace", "alice", "198.51.100.10", "udp/123");
      expect(denied.stdout).toMatch(/^verdict: +denied$/m);
      expect(denied.stdout).toMatch(/^reason: +to 198\.51\.100\.10 udp\/123: denied: no allow rule matches \(default deny\)$/m);
      expect(gw("policy", "trace", "alice", "198.51.100.10", "tcp").code).toBe(2);

      expect(gw("user", "rule", "del", "alice", "1").code).toBe(0);
      expect(JSON.parse(gw("policy", "trace", "alice", "198.51.100.22", "tcp/22", "--json").stdout).decidedBy).toBe("defaultDeny");
    }, 60_000);

    test("rates on groups and users; a change that breaks a policy test is refused and changes nothing", () => {
      expect(gw("group", "set", "staff", "--rate-up", "20mbit", "--rate-down", "50mbit").code).toBe(0);
      expect(JSON.parse(gw("group", "show", "staff", "--json").stdout).policy).toMatchObject({ rateUp: 20_000_000, rateDown: 50_000_000 });
      expect(gw("user", "set", "alice", "--rate-down", "5mbit").code).toBe(0);
      expect(JSON.parse(gw("user", "show", "alice", "--json").stdout).rateDown).toBe(5_000_000);
      expect(gw("user", "set", "alice", "--rate-down", "none").code).toBe(0);
      expect(JSON.parse(gw("user", "show", "alice", "--json").stdout).rateDown).toBeUndefined();
      expect(gw("group", "set", "staff", "--rate-up", "fast").stderr).toContain("rateUp:");

      // alice may reach the web server and the DNS server; nobody reaches SSH on it.
      const tests = ["--test", "alice 198.51.100.10 tcp/443 allow", "--test", "198.51.100.53 udp/53 allow", "--test", "198.51.100.10 tcp/22 deny"];
      expect(gw("group", "set", "staff", ...tests).code).toBe(0);
      expect(JSON.parse(gw("group", "show", "staff", "--json").stdout).policy.tests).toEqual([
        { user: "alice", to: "198.51.100.10", proto: "tcp", port: 443, expect: "allow" },
        { to: "198.51.100.53", proto: "udp", port: 53, expect: "allow" },
        { to: "198.51.100.10", proto: "tcp", port: 22, expect: "deny" },
      ]);
      const breaking = gw("group", "rule", "del", "staff", "1");
      expect(breaking.code).toBe(1);
      expect(breaking.stderr).toMatch(/^gw: policy_test_failed: the change breaks group staff's policy tests, nothing was changed: tests\[0\] fails: alice may reach 198\.51\.100\.10 tcp\/443, but /);
      const userDeny = gw("user", "rule", "add", "alice", "deny", "--to", "198.51.100.10/32");
      expect(userDeny.code).toBe(1);
      expect(userDeny.stderr).toContain("group staff tests[0] fails: alice may reach 198.51.100.10 tcp/443, but to 198.51.100.10 tcp/443: denied by user rule 1");
      const opening = gw("group", "rule", "add", "staff", "allow", "--proto", "tcp", "--to", "198.51.100.10/32", "--port", "22");
      expect(opening.stderr).toContain("tests[2] fails: a member may not reach 198.51.100.10 tcp/22, but to 198.51.100.10 tcp/22: allowed by rule 3");
      expect(JSON.parse(gw("group", "rule", "list", "staff", "--json").stdout).rules).toHaveLength(2);
      expect(gw("group", "set", "staff", "--test", "alice 198.51.100.10 tcp allow").code).toBe(2);

      // Every change went through the API and is audited; the refused ones left no record.
      const actions: string[] = JSON.parse(gw("audit", "--json").stdout).map((a: { action: string }) => a.action);
      const count = (action: string) => actions.filter((a) => a === action).length;
      expect([count("group.update"), count("user.update")]).toEqual([5, 4]);
    }, 60_000);
  });
}
