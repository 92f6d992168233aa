import { createHash } from "node:crypto";
import { createApiApp } from "../../../src/api/app.ts";
import { ControlPlane } from "../../../src/control/control-plane.ts";
import { SessionRegistry, type LiveConnection, type EndReason } from "../../../src/control/sessions.ts";
import type { GwEvent } from "../../../src/control/events.ts";
import { DropCounters } from "../../../src/net/drop-counters.ts";
import type { PasswordHasher } from "../../../src/runtime/password-hasher.ts";
import { openSqliteStore } from "../../../src/store/sqlite-store.ts";
import type { Store } from "../../../src/store/store.ts";
import { generateSecretBoxKey } from "../../../src/control/auth/secret-box.ts";
import { ok } from "../../../src/errors.ts";

/** Fast stand-in for argon2id: these tests are about the API, not the hash. */
export const fakeHasher: PasswordHasher = {
  hash: async (p) => ok(`fake$${createHash("sha256").update(p).digest("hex")}`),
  verify: async (p, phc) => ok(phc === `fake$${createHash("sha256").update(p).digest("hex")}`),
};

export interface Fixture {
  control: ControlPlane;
  /** The in-memory store behind it (for tests that seed what only a running gateway writes, such as usage). */
  store: Store;
  admin: string;
  reader: string;
  events: GwEvent[];
  request(method: string, path: string, body?: unknown, o?: { token?: string | null; contentType?: string; raw?: string }): Promise<{ status: number; body: any; text: string; headers: Headers }>;
  /** A live session with a fake connection, as the tunnel would make it. */
  connect(user: string, group: string): { id: string; closed: EndReason[] };
}

/** The API in process on an in-memory store, with a running-gateway view (so events and status work). */
export function apiFixture(o: { running?: boolean; hasher?: PasswordHasher; busyRetrySeconds?: number } = {}): Fixture {
  const store = openSqliteStore(":memory:");
  if (!store.ok) throw store.error;
  const sessions = new SessionRegistry(300_000, Date.now);
  const applied: unknown[] = [];
  let settings = { listen: "0.0.0.0", port: 443, dtls: true, apiListen: "127.0.0.1:8443", apiOnTunnel: true, tunName: "gw0", tunOffload: true, tlsRecordBatching: true, tlsRecordReading: true, workers: 1, pool: "10.10.0.0/24", cookieTimeout: 300, mtu: 1400, dpd: 30, keepalive: 20, mobileDpd: 600, maxSessionsPerUser: 2, usageFlushSeconds: 15, usageRetentionDays: 400, logFormat: "text", nat: false, passwordHashMemoryKiB: 19456, passwordHashPasses: 2, loginMaxFailuresPerIp: 20, loginMaxFailuresPerUser: 5, loginFailureWindow: 300, loginBanSeconds: 300 };
  const otpKey = generateSecretBoxKey();
  const control = new ControlPlane({
    store: store.value,
    otpKey: () => ok(otpKey),
    hasher: o.hasher ?? fakeHasher,
    sessions,
    now: Date.now,
    runtime:
      o.running === false
        ? undefined
        : {
            startedAt: Date.now(),
            listeners: () => ({ tunnel: { host: "0.0.0.0", tcpPort: 443, udpPort: 443, tlsVersions: ["TLSv1.2", "TLSv1.3"] }, api: { host: "127.0.0.1", port: 8443, addresses: ["127.0.0.1:8443", "10.10.0.1:8443"], tlsVersions: ["TLSv1.2", "TLSv1.3"] } }),
            tun: () => ({ name: "gw0", state: "up" }),
            pool: () => ({ cidr: "10.10.0.0/24", capacity: 253, used: sessions.list().length }),
            drops: new DropCounters(),
            front: () => ({ unauthenticated: 2, refused: { per_address_limit: 3 }, timedOut: { head: 1 } }),
            busyRetrySeconds: () => o.busyRetrySeconds ?? 2,
            settings: {
              current: () => settings as never,
              flagged: ["port"],
              applyLive: (s) => {
                applied.push(s);
                settings = { ...settings, mtu: s.mtu, dpd: s.dpd, keepalive: s.keepalive, mobileDpd: s.mobileDpd };
              },
            },
          },
  });
  const events: GwEvent[] = [];
  control.events.subscribe((e) => events.push(e));
  const admin = control.tokens.issueInternal("test-admin", "admin");
  const reader = control.tokens.issueInternal("test-reader", "read");
  const app = createApiApp(control);
  let address = 10;
  return {
    control,
    store: store.value,
    admin,
    reader,
    events,
    async request(method, path, body, opts = {}) {
      const token = opts.token === undefined ? admin : opts.token;
      const headers: Record<string, string> = {};
      if (token !== null) headers.authorization = `Bearer ${token}`;
      if (body !== undefined || opts.raw !== undefined) headers["content-type"] = opts.contentType ?? "application/json";
      const res = await app.request(path, { method, headers, body: opts.raw ?? (body === undefined ? undefined : JSON.stringify(body)) });
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return { status: res.status, body: parsed, text, headers: res.headers };
    },
    connect(user, group) {
      const { session } = sessions.create({ user, group, policy: { routes: [], excludeRoutes: [], dns: [] }, configHash: "h" });
      session.address = (10 << 24) | (10 << 16) | address++;
      const closed: EndReason[] = [];
      const info = { clientAddress: "203.0.113.2", clientPort: 40000 + address, userAgent: "Open AnyConnect VPN Agent v9.01", hostname: "laptop\u0007", connectedAt: Date.now(), channel: "cstp" as const, cipher: "TLSv1.3 TLS_AES_256_GCM_SHA384", mtu: 1400, lastRxAt: () => Date.now() };
      const connection: LiveConnection = { info, close: (r) => closed.push(r) };
      sessions.attach(session, connection);
      session.traffic.bytesIn += 1000;
      session.traffic.packetsIn += 10;
      return { id: session.id, closed };
    },
  };
}

/** The paths of a validation error's details. */
export const paths = (body: any): string[] => (body?.error?.details ?? []).map((d: { path: string }) => d.path);
