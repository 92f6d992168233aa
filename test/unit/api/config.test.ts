import { describe, expect, test } from "bun:test";
import { apiFixture, paths } from "./fixture.ts";

const doc = { listen: "0.0.0.0", port: 443, dtls: true, apiListen: "127.0.0.1:8443", apiOnTunnel: true, tunName: "gw0", tunOffload: true, tlsRecordBatching: true, tlsRecordReading: true, workers: 1, pool: "10.10.0.0/24", cookieTimeout: 300, mtu: 1400, dpd: 30, keepalive: 20, mobileDpd: 600, maxSessionsPerUser: 2, usageFlushSeconds: 15, usageRetentionDays: 400, logFormat: "text", nat: false, passwordHashMemoryKiB: 19456, passwordHashPasses: 2, loginMaxFailuresPerIp: 20, loginMaxFailuresPerUser: 5, loginFailureWindow: 300, loginBanSeconds: 300 };

describe("API /api/v1/config", () => {
  test("GET gives the defaults when nothing is stored", async () => {
    const f = apiFixture();
    const r = await f.request("GET", "/api/v1/config");
    expect(r.status).toBe(200);
    expect(r.body).toEqual(doc);
  });

  test("PUT stores the whole document; live settings apply now, listener changes need a restart, flagged ones are reported", async () => {
    const f = apiFixture();
    const next = { ...doc, mtu: 1300, pool: "10.20.0.0/24", apiListen: "127.0.0.1:9443", port: 4443 };
    const r = await f.request("PUT", "/api/v1/config", next);
    expect(r.status).toBe(200);
    expect(r.body.config).toEqual(next);
    expect(r.body.restartRequired.sort()).toEqual(["apiListen", "pool"]);
    expect(r.body.overriddenByFlags).toEqual(["port"]);
    expect(f.control.runtime!.settings.current().mtu).toBe(1300);
    expect((await f.request("GET", "/api/v1/config")).body).toEqual(next);
    // Idempotent: the same document again is no change (and no second audit record).
    const again = await f.request("PUT", "/api/v1/config", next);
    expect(again.status).toBe(200);
    expect(f.control.audit.list().filter((a) => a.action === "config.update")).toHaveLength(1);
    expect(f.events.filter((e) => e.type === "config.updated")).toHaveLength(2);
  });

  test("a bad document changes nothing and every problem comes back with its path", async () => {
    const f = apiFixture();
    const r = await f.request("PUT", "/api/v1/config", { ...doc, port: 70000, pool: "10.10.0.1/24", mtu: "1400", apiListen: "nowhere", colour: "blue", certFile: "/x.pem" });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("invalid_input");
    expect(paths(r.body).sort()).toEqual(["apiListen", "colour", "mtu", "pool", "port"]);
    expect((await f.request("GET", "/api/v1/config")).body).toEqual(doc);
    expect(f.control.audit.list()).toEqual([]);
    // Cross-field rules: cert and key together; the API never on the tunnel port.
    const cross = await f.request("PUT", "/api/v1/config", { ...doc, certFile: "/c.pem", apiListen: "0.0.0.0:443" });
    expect(cross.status).toBe(400);
    expect(paths(cross.body).sort()).toEqual(["apiListen", "certFile"]);
    // apiOnTunnel is a boolean setting: a string is refused, false is a restart-required change.
    const tunnel = await f.request("PUT", "/api/v1/config", { ...doc, apiOnTunnel: "no" });
    expect(tunnel.status).toBe(400);
    expect(paths(tunnel.body)).toEqual(["apiOnTunnel"]);
    const off = await f.request("POST", "/api/v1/config/check", { ...doc, apiOnTunnel: false });
    expect(off.body).toEqual({ valid: true, problems: [], restartRequired: ["apiOnTunnel"], overriddenByFlags: [] });
  });

  test("check is a dry run: verdict, problems and restart needs, nothing stored (read tokens may check)", async () => {
    const f = apiFixture();
    const good = await f.request("POST", "/api/v1/config/check", { ...doc, tunName: "vpn0" }, { token: f.reader });
    expect(good.status).toBe(200);
    expect(good.body).toEqual({ valid: true, problems: [], restartRequired: ["tunName"], overriddenByFlags: [] });
    const bad = await f.request("POST", "/api/v1/config/check", { port: "x" });
    expect(bad.status).toBe(200);
    expect(bad.body.valid).toBe(false);
    expect(bad.body.problems.map((p: { path: string }) => p.path)).toEqual(["port"]);
    expect((await f.request("GET", "/api/v1/config")).body).toEqual(doc);
  });
});
