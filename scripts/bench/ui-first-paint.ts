// Web UI first paint: a data directory (SQLite file) with 1,000 users and 200 live sessions
// (fake connections registered in process, as the tunnel registers real ones), then each page
// asked 30 times through the UI app (app.request: no TLS, no network). Prints, per page, the
// median and worst time to first byte (the Response with its headers) and to the full HTML.
// Goal: under 200 ms each. Prints figures; asserts nothing.
// bun scripts/bench/ui-first-paint.ts
import { ok } from "../../src/errors.ts";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ControlPlane } from "../../src/control/control-plane.ts";
import { SessionRegistry, type LiveConnection } from "../../src/control/sessions.ts";
import { DropCounters } from "../../src/net/drop-counters.ts";
import type { PasswordHasher } from "../../src/runtime/password-hasher.ts";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";
import { createUiApp } from "../../src/ui/ui-app.tsx";

const USERS = 1000;
const SESSIONS = 200;
const RUNS = 30;
const PAGES = ["/ui", "/ui/connections", "/ui/users", "/ui/users?page=20", "/ui/users/user0042", "/ui/users/user0042?to=198.51.100.10&proto=tcp&port=22", "/ui/groups", "/ui/groups/group3", "/ui/groups/group3?user=user0042&to=2001:db8::1&proto=tcp&port=443", "/ui/tokens", "/ui/bans", "/ui/admins", "/ui/settings", "/ui/audit"];

/** The password hash is not what this measures (one sign-in): a fast stand-in. */
const hasher: PasswordHasher = {
  hash: async (p) => ok(`bench$${createHash("sha256").update(p).digest("hex")}`),
  verify: async (p, phc) => ok(phc === `bench$${createHash("sha256").update(p).digest("hex")}`),
};

const dir = mkdtempSync(join(tmpdir(), "gw-bench-ui-"));
try {
  const store = openSqliteStore(join(dir, "gw.db"));
  if (!store.ok) throw store.error;
  const sessions = new SessionRegistry(300_000, Date.now);
  const control = new ControlPlane({
    store: store.value,
    hasher,
    sessions,
    now: Date.now,
    runtime: {
      startedAt: Date.now(),
      listeners: () => ({ tunnel: { host: "0.0.0.0", tcpPort: 443, udpPort: 443, tlsVersions: ["TLSv1.3"] }, api: { host: "127.0.0.1", port: 8443, addresses: ["127.0.0.1:8443"], tlsVersions: ["TLSv1.3"] } }),
      tun: () => ({ name: "gw0", state: "up" }),
      pool: () => ({ cidr: "10.10.0.0/22", capacity: 1021, used: SESSIONS }),
      drops: new DropCounters(),
      front: () => ({ unauthenticated: 0, refused: {}, timedOut: {} }),
      settings: { current: () => control.settings.get(), flagged: [], applyLive: () => {} },
    },
  });

  const setupStart = performance.now();
  for (let g = 0; g < 10; g++) control.groups.add(`group${g}`, { routes: [`198.51.${100 + g}.0/24`], rules: [{ action: "allow", to: "198.51.100.0/24", proto: "tcp", ports: "443" }] }, "bench");
  for (let i = 0; i < USERS; i++) {
    const r = await control.users.add({ name: `user${String(i).padStart(4, "0")}`, groups: [`group${i % 10}`] }, "bench");
    if (!r.ok) throw r.error;
  }
  for (let i = 0; i < SESSIONS; i++) {
    const user = `user${String(i).padStart(4, "0")}`;
    const { session } = sessions.create({ user, group: `group${i % 10}`, policy: { routes: [], excludeRoutes: [], dns: [] }, configHash: "h" });
    session.address = ((10 << 24) | (10 << 16) | (i + 2)) >>> 0;
    session.traffic.bytesIn = 1000 * i;
    session.traffic.bytesOut = 3000 * i;
    const connection: LiveConnection = {
      close: () => {},
      info: { clientAddress: "203.0.113.2", clientPort: 40000 + i, userAgent: "Open AnyConnect VPN Agent v9.01", hostname: `host${i}`, connectedAt: Date.now(), channel: i % 3 === 0 ? "cstp" : "dtls", cipher: "DTLS1.2 PSK-AES256-GCM-SHA384", mtu: 1400, lastRxAt: () => Date.now() },
    };
    sessions.attach(session, connection);
  }
  await control.admins.add({ name: "bench", role: "admin", password: "bench-password" }, "bench");
  console.log(`setup: ${USERS} users, ${SESSIONS} live sessions, ${control.audit.list(0, 100_000).length} audit entries in ${(performance.now() - setupStart).toFixed(0)} ms`);

  const ui = createUiApp(control);
  const request = (path: string, cookie?: string, form?: Record<string, string>) =>
    ui.request(`https://gw.bench${path}`, { method: form ? "POST" : "GET", headers: { ...(cookie ? { cookie } : {}), ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}) }, body: form ? new URLSearchParams(form).toString() : undefined }, { address: "127.0.0.1" });
  const signIn = await request("/ui/sign-in", undefined, { name: "bench", password: "bench-password" });
  const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0]!;
  if (signIn.status !== 303) throw new Error(`sign-in failed: ${signIn.status}`);

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`${"page".padEnd(24)} ${"first byte med/max".padStart(20)} ${"full HTML med/max".padStart(20)} ${"size".padStart(9)}`);
  for (const path of PAGES) {
    const firstByte: number[] = [];
    const full: number[] = [];
    let size = 0;
    for (let i = 0; i < RUNS; i++) {
      const start = performance.now();
      const res = await request(path, cookie);
      firstByte.push(performance.now() - start);
      const html = await res.text();
      full.push(performance.now() - start);
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${html.slice(0, 200)}`);
      size = html.length;
    }
    const ms = (xs: number[]) => `${median(xs).toFixed(1)} / ${Math.max(...xs).toFixed(1)} ms`;
    console.log(`${path.padEnd(24)} ${ms(firstByte).padStart(20)} ${ms(full).padStart(20)} ${`${(size / 1024).toFixed(0)} kB`.padStart(9)}`);
  }
  store.value.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
