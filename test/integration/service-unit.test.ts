/** gw service install writes a unit that systemd accepts (systemd-analyze verify), with this binary and data directory. */
import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { gwCli, tempDir } from "../harness/gateway.ts";

const hasAnalyze = spawnSync("systemd-analyze", ["--version"]).status === 0;

describe.skipIf(!hasAnalyze)("gw service install", () => {
  const root = tempDir("service");
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const unit = join(root, "etc/systemd/system/gw.service");

  test("the unit passes systemd-analyze verify; it keeps two capabilities and a state directory", () => {
    const r = gwCli("sources", ["service", "install", "--binary", process.execPath, "--data-dir", "/var/lib/gw-test", "--root", root]);
    expect(r.code).toBe(0);
    const text = readFileSync(unit, "utf8");
    expect(text).toContain(`ExecStart=${process.execPath} serve --data-dir /var/lib/gw-test`);
    expect(text).toContain("StateDirectory=gw-test");
    expect(text).toContain("CapabilityBoundingSet=CAP_NET_ADMIN CAP_NET_BIND_SERVICE");
    const verify = spawnSync("systemd-analyze", ["verify", unit], { encoding: "utf8" });
    expect(`${verify.status} ${verify.stderr}`.trim()).toBe("0");
  });

  test("an existing unit is kept without --force; a data directory outside /var/lib is refused", () => {
    expect(gwCli("sources", ["service", "install", "--binary", process.execPath, "--root", root]).stderr).toContain("unit_exists");
    expect(gwCli("sources", ["service", "install", "--binary", process.execPath, "--root", root, "--force", "--data-dir", "/srv/gw"]).code).toBe(2);
  });
});
