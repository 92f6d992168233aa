/** gw doctor on a host (a namespace of the test's own) with forwarding off, then on. */
import { afterAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { gwCli, provision, tempDir } from "../harness/gateway.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { createLoopbackNamespace } from "../harness/topology.ts";

interface Finding {
  check: string;
  status: "ok" | "warn" | "fail";
  detail: string;
  fix?: string;
}

describe.skipIf(!e2eAvailable())("gw doctor", () => {
  const ns = createLoopbackNamespace("doc", { forwarding: false });
  const work = tempDir("doctor");
  const dataDir = join(work, "data");
  provision("sources", dataDir, [[["group", "add", "staff", "--route", "198.51.100.0/24", "--dns", "127.0.0.53"]]]);
  afterAll(() => {
    ns.destroy();
    rmSync(work, { recursive: true, force: true });
  });
  const doctor = () => {
    const r = gwCli("sources", ["doctor", "--json", "--data-dir", dataDir], undefined, ["ip", "netns", "exec", ns.name]);
    return { code: r.code, findings: new Map((JSON.parse(r.stdout) as Finding[]).map((f) => [f.check, f])) };
  };

  test("forwarding off is reported with the command that fixes it; every host check is there", () => {
    const { code, findings } = doctor();
    expect(code).toBe(0); // warnings only
    expect(findings.get("IP forwarding")?.status).toBe("warn");
    expect(findings.get("IP forwarding")?.fix).toContain("sysctl -w net.ipv4.ip_forward=1");
    for (const check of ["open files", "TUN device", "CAP_NET_ADMIN", "NAT", "ports", "server certificate", "clock", "DNS servers"]) expect(findings.has(check)).toBe(true);
    expect(findings.get("TUN device")?.status).toBe("ok");
    expect(findings.get("CAP_NET_ADMIN")?.status).toBe("ok");
    expect(findings.get("ports")?.status).toBe("ok");
    // Nothing answers DNS on 127.0.0.53 inside the namespace.
    expect(findings.get("DNS servers")?.status).toBe("warn");
    expect(findings.get("DNS servers")?.detail).toContain("127.0.0.53");
  }, 30_000);

  test("with forwarding on, that finding is ok", () => {
    execFileSync("ip", ["netns", "exec", ns.name, "sysctl", "-qw", "net.ipv4.ip_forward=1"]);
    expect(doctor().findings.get("IP forwarding")?.status).toBe("ok");
  }, 30_000);
});
