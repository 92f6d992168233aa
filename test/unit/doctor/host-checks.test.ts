import { describe, expect, test } from "bun:test";
import { checkClock } from "../../../src/doctor/clock-check.ts";
import { checkServerCertificate } from "../../../src/doctor/certificate-check.ts";
import { checkForwarding, checkNetAdmin, checkTunDevice } from "../../../src/doctor/host-checks.ts";
import { checkDnsServers } from "../../../src/doctor/dns-check.ts";
import { checkPorts } from "../../../src/doctor/port-check.ts";
import { createServer } from "node:net";
import { createSelfSignedCertificate } from "../../../src/pki/self-signed.ts";
import { createSocket } from "node:dgram";

describe("gw doctor's host checks", () => {
  test("forwarding off is a warning with the sysctl fix", () => {
    expect(checkForwarding(() => "1\n").status).toBe("ok");
    const off = checkForwarding(() => "0\n");
    expect(off.status).toBe("warn");
    expect(off.fix).toContain("sysctl -w net.ipv4.ip_forward=1");
    expect(checkForwarding(() => undefined).status).toBe("warn");
  });

  test("CAP_NET_ADMIN is bit 12 of CapEff", () => {
    expect(checkNetAdmin("CapEff:\t0000000000001000\n", "x").status).toBe("ok");
    expect(checkNetAdmin("CapEff:\t000001ffffffffff\n", "x").status).toBe("ok");
    const without = checkNetAdmin("CapEff:\t0000000000000400\n", "x");
    expect(without.status).toBe("fail");
    expect(without.fix).toContain("AmbientCapabilities=CAP_NET_ADMIN");
  });

  test("TUN device", () => {
    expect(checkTunDevice(() => true).status).toBe("ok");
    expect(checkTunDevice(() => false).fix).toContain("modprobe tun");
  });

  test("clock: backwards fails, unsynchronised warns", () => {
    expect(checkClock({ now: 1_000_000, storeWrittenAt: 2_000_000 }).status).toBe("fail");
    expect(checkClock({ now: 3_000_000, storeWrittenAt: 2_000_000, synchronized: false }).status).toBe("warn");
    expect(checkClock({ now: 3_000_000, synchronized: true }).status).toBe("ok");
  });

  test("server certificate: valid, expiring, expired, not yet valid, garbage", () => {
    const pem = createSelfSignedCertificate({ commonName: "doctor.test", days: 365 }).certPem;
    const now = Date.now();
    expect(checkServerCertificate(pem, "c.pem", now).status).toBe("ok");
    expect(checkServerCertificate(pem, "c.pem", now + 350 * 86_400_000).status).toBe("warn");
    expect(checkServerCertificate(pem, "c.pem", now + 400 * 86_400_000).status).toBe("fail");
    expect(checkServerCertificate(pem, "c.pem", now - 10 * 86_400_000).status).toBe("fail");
    expect(checkServerCertificate("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "c.pem", now).status).toBe("fail");
    expect(checkServerCertificate(undefined, "c.pem", now).status).toBe("warn");
  });

  test("ports: a held port is named with the fix", async () => {
    const holder = createServer();
    await new Promise<void>((r) => holder.listen({ host: "127.0.0.1", port: 0 }, r));
    const port = (holder.address() as { port: number }).port;
    try {
      const busy = await checkPorts({ host: "127.0.0.1", tcp: port, api: { host: "127.0.0.1", port: 0 } });
      expect(busy.status).toBe("fail");
      expect(busy.detail).toContain("EADDRINUSE");
      expect(busy.fix).toContain("ss -ltnup");
    } finally {
      holder.close();
    }
    expect((await checkPorts({ host: "127.0.0.1", tcp: 0, udp: 0, api: { host: "127.0.0.1", port: 0 } })).status).toBe("ok");
  });

  test("DNS: a server that answers is ok, a silent one a warning naming it", async () => {
    expect((await checkDnsServers([])).status).toBe("ok");
    const answering = createSocket("udp4");
    answering.on("message", (m, from) => answering.send(Buffer.concat([m.subarray(0, 2), Buffer.from([0x81, 0x80]), m.subarray(4)]), from.port, from.address));
    const silent = createSocket("udp4");
    await Promise.all([answering, silent].map((s) => new Promise<void>((r) => s.bind(0, "127.0.0.1", r))));
    try {
      expect((await checkDnsServers(["127.0.0.1"], answering.address().port)).status).toBe("ok");
      const quiet = await checkDnsServers(["127.0.0.1"], silent.address().port);
      expect(quiet.status).toBe("warn");
      expect(quiet.detail).toContain("no answer");
    } finally {
      answering.close();
      silent.close();
    }
  });
});
