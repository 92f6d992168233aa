/**
 * `gw import ocserv` end to end (issue 10): an ocserv.conf, an ocpasswd file made by Debian's
 * ocpasswd and config-per-group/-user files are imported; then Debian's openconnect logs in with
 * the old passwords and its script sees the routes, DNS, split DNS and timeouts ocserv would have
 * sent, and a per-user DNS override.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gwCli, provision, startGw, tempDir, type GwVariant, type RunningGw } from "../harness/gateway.ts";
import { startOpenconnect, waitForScript } from "../harness/openconnect.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createTopology, type Topology } from "../harness/topology.ts";
import { e2eAvailable } from "../harness/preconditions.ts";

const variant: GwVariant = "sources";
const ocpasswdAvailable = Bun.which("ocpasswd") !== null;

describe.skipIf(!e2eAvailable(variant) || !ocpasswdAvailable)("gw import ocserv, then openconnect (sources)", () => {
  let topology: Topology;
  let procs: ProcessGroup;
  let gw: RunningGw;
  let work: string;
  let dataDir: string;
  let dryRun: { code: number; stdout: string; stderr: string };
  let imported: { code: number; stdout: string; stderr: string };
  const stateDir = (name: string) => {
    const dir = join(work, name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };

  beforeAll(async () => {
    topology = createTopology("oi");
    procs = new ProcessGroup();
    work = tempDir("ocserv-import");
    dataDir = join(work, "data");
    const etc = join(work, "ocserv");
    mkdirSync(join(etc, "config-per-group"), { recursive: true });
    mkdirSync(join(etc, "config-per-user"), { recursive: true });
    const passwd = join(etc, "ocpasswd");
    // Debian's ocpasswd writes the hashes ($5$ here), as an ocserv operator has them.
    execFileSync("ocpasswd", ["-c", passwd, "-g", "staff", "ä/b:c"], { input: "old-pass-1\nold-pass-1\n" });
    execFileSync("ocpasswd", ["-c", passwd, "-g", "staff", "jürgen"], { input: "old-pass-2\nold-pass-2\n" });
    writeFileSync(
      join(etc, "ocserv.conf"),
      [
        "# ocserv.conf",
        `auth = "plain[passwd=${passwd}]"`,
        "ipv4-network = 10.78.0.0",
        "ipv4-netmask = 255.255.255.0",
        "dns = 198.51.100.53",
        "split-dns = corp.example",
        "default-domain = corp.example",
        "idle-timeout = 1200",
        "session-timeout = 7200",
        "cookie-timeout = 600",
        "dpd = 60",
        "keepalive = 300",
        "max-same-clients = 4",
        "isolate-workers = true",
        `config-per-group = ${join(etc, "config-per-group")}`,
        `config-per-user = ${join(etc, "config-per-user")}`,
      ].join("\n"),
    );
    writeFileSync(join(etc, "config-per-group", "staff"), "route = 198.51.100.0/255.255.255.0\nsplit-dns = staff.example\nsplit-dns = intra.example\nidle-timeout = 900\n");
    writeFileSync(join(etc, "config-per-user", "jürgen"), "dns = 198.51.100.99\n");

    provision(variant, dataDir, []);
    dryRun = gwCli(variant, ["import", "ocserv", "--config", join(etc, "ocserv.conf"), "--dry-run", "--data-dir", dataDir]);
    const usersAfterDryRun = gwCli(variant, ["user", "list", "--json", "--data-dir", dataDir]);
    expect(JSON.parse(usersAfterDryRun.stdout)).toEqual([]);
    imported = gwCli(variant, ["import", "ocserv", "--config", join(etc, "ocserv.conf"), "--data-dir", dataDir]);
    gw = await startGw(variant, topology, procs, dataDir);
  }, 90_000);

  afterAll(async () => {
    await procs?.stopAll();
    topology?.destroy();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("--dry-run prints the map and each unmapped option by name; the import then succeeds", () => {
    expect(dryRun.code).toBe(0);
    const said = dryRun.stdout + dryRun.stderr;
    expect(said).toContain("mapped: ocserv.conf: split-dns = corp.example -> groupDefaults.splitDns");
    expect(said).toContain("not mapped: ocserv.conf: isolate-workers: no gw equivalent");
    expect(said).toContain("dry run: nothing changed");
    expect(imported.code).toBe(0);
    expect(imported.stdout + imported.stderr).toContain("imported: password of ä/b:c");
  });

  test("the old password logs in; the script sees the group's routes, split DNS and idle timeout, the global DNS and domain, and the session timeout", async () => {
    const state = stateDir("staff");
    const oc = startOpenconnect(topology, procs, { user: "ä/b:c", password: "old-pass-1", pin: gw.pin, stateDir: state, interface: "oci0", flags: ["--no-dtls"] });
    const env = await waitForScript(state, "connect");
    expect(env.get("CISCO_SPLIT_INC")).toBe("1");
    expect(env.get("CISCO_SPLIT_INC_0_ADDR")).toBe("198.51.100.0");
    expect(env.get("CISCO_SPLIT_INC_0_MASKLEN")).toBe("24");
    expect(env.get("INTERNAL_IP4_DNS")).toBe("198.51.100.53");
    expect(env.get("CISCO_DEF_DOMAIN")).toBe("corp.example");
    expect(env.get("CISCO_SPLIT_DNS")).toBe("intra.example,staff.example"); // openconnect prepends each X-CSTP-Split-DNS it reads
    expect(env.get("IDLE_TIMEOUT")).toBe("900");
    expect(env.get("INTERNAL_IP4_ADDRESS")).toStartWith("10.78.0.");
    await oc.waitFor("Session authentication will expire at");
    oc.child.kill("SIGINT");
    await oc.exited;
    // The crypt hash was replaced by argon2id at that login: the same password logs in again.
    const againState = stateDir("staff-again");
    const again = startOpenconnect(topology, procs, { user: "ä/b:c", password: "old-pass-1", pin: gw.pin, stateDir: againState, interface: "oci3", flags: ["--no-dtls"] });
    await waitForScript(againState, "connect");
    again.child.kill("SIGINT");
    await again.exited;
  }, 60_000);

  test("a per-user DNS override (config-per-user) reaches the script; the rest is the group's", async () => {
    const state = stateDir("juergen");
    const oc = startOpenconnect(topology, procs, { user: "jürgen", password: "old-pass-2", pin: gw.pin, stateDir: state, interface: "oci1", flags: ["--no-dtls"] });
    const env = await waitForScript(state, "connect");
    expect(env.get("INTERNAL_IP4_DNS")).toBe("198.51.100.99");
    expect(env.get("CISCO_SPLIT_DNS")).toBe("intra.example,staff.example"); // openconnect prepends each X-CSTP-Split-DNS it reads
    oc.child.kill("SIGINT");
    await oc.exited;
  }, 60_000);

  test("a wrong password is refused", async () => {
    const state = stateDir("wrong");
    const oc = startOpenconnect(topology, procs, { user: "jürgen", password: "not-it", pin: gw.pin, stateDir: state, interface: "oci2", flags: ["--no-dtls"] });
    expect(await oc.exited).not.toBe(0);
    expect(oc.stderr() + oc.stdout()).toContain("Login failed: wrong user name or password.");
  }, 60_000);
});
