/**
 * The spec's literal flow (gateway-spec.md) from a small TypeScript client in the client
 * namespace: urlencoded POST /auth, bare <auth id="success">, CONNECT /VENDORSSLC/tunnel,
 * compact framing, DPD 0x03 -> 0x04, source-address validation, bad cookie, bad input.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { provision, repoRoot, startGw, tempDir, type RunningGw } from "../harness/gateway.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createTopology, type Topology } from "../harness/topology.ts";

describe.skipIf(!e2eAvailable())("the spec's literal dialect against gw", () => {
  let topology: Topology;
  let procs: ProcessGroup;
  let gw: RunningGw;
  let work: string;

  beforeAll(async () => {
    topology = createTopology("d");
    procs = new ProcessGroup();
    work = tempDir("spec");
    const dataDir = join(work, "data");
    provision("sources", dataDir, [
      [["group", "add", "staff", "--route", "198.51.100.0/24", "--dns", "198.51.100.53"]],
      [["user", "add", "carol", "--group", "staff", "--password-stdin"], "carol-pass-3\n"],
    ]);
    gw = await startGw("sources", topology, procs, dataDir);
  }, 60_000);

  afterAll(async () => {
    await procs?.stopAll();
    topology?.destroy();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("urlencoded login, compact CSTP, DPD, anti-spoofing, bad cookie, bad input", () => {
    const out = execFileSync(
      topology.exec(topology.client)[0]!,
      [...topology.exec(topology.client).slice(1), process.execPath, join(repoRoot, "test/e2e/fixtures/spec-client.ts"), topology.gatewayOutside, "carol", "carol-pass-3", "staff"],
      { encoding: "utf8", timeout: 30_000 },
    );
    const r = JSON.parse(out);

    expect(r.garbageStatus).toMatch(/^HTTP\/1\.1 4\d\d /);
    expect(r.dtdStatus).toBe("HTTP/1.1 400 Bad Request");
    expect(r.dtdBody).toContain("DOCTYPE");

    expect(r.authStatus).toBe("HTTP/1.1 200 OK");
    expect(r.authBody).toMatch(/^<\?xml[^>]*\?>\s*<auth id="success">/);
    expect(r.authBody).toMatch(/<config-hash>[0-9a-f]{64}<\/config-hash>/);
    expect(r.token).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes
    expect(r.setCookies).toContain(`webvpn=${r.token}; Secure; HttpOnly`);

    expect(r.connectStatus).toBe("HTTP/1.1 200 CONNECTED");
    const headers = new Map<string, string[]>();
    for (const [n, v] of r.connectHeaders as [string, string][]) headers.set(n, [...(headers.get(n) ?? []), v]);
    expect(headers.get("X-CSTP-Version")).toEqual(["1"]);
    expect(headers.get("X-CSTP-Address")?.[0]).toMatch(/^10\.10\.0\.\d+$/);
    expect(headers.get("X-CSTP-Netmask")).toEqual(["255.255.255.0"]);
    expect(headers.get("X-CSTP-DNS")).toEqual(["198.51.100.53"]);
    expect(headers.get("X-CSTP-Split-Include")).toEqual(["198.51.100.0/255.255.255.0"]);
    expect(headers.get("X-CSTP-MTU")).toEqual(["1300"]); // the client's wish, within limits
    expect(headers.get("X-CSTP-DPD")).toEqual(["30"]);
    expect(headers.get("X-CSTP-Keepalive")).toEqual(["20"]);

    expect(r.dpdReply).toEqual({ type: 0x04, length: 0 });
    // Only the genuine echo request (id 0x4242) is answered; the spoofed one (0x5151) was dropped.
    expect(r.replies).toEqual([{ type: 0x02, icmpType: 0, id: 0x4242, src: "198.51.100.2" }]);

    expect(r.badCookieStatus).toBe("HTTP/1.1 401 Unauthorized");
    expect(r.badCookieReason).toContain("log in again");
  }, 60_000);
});
