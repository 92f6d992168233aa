import { describe, expect, test } from "bun:test";
import type { ConnectionView } from "../../../src/control/connections.ts";
import { ConnectionRates, parseSort, sortConnections } from "../../../src/ui/connection-rates.ts";
import { warningsOf } from "../../../src/ui/pages/dashboard.tsx";
import { readEvents } from "./sse-reader.ts";
import { uiFixture } from "./ui-fixture.ts";

const view = (id: string, user: string, bytesIn: number, bytesOut: number, since: number): ConnectionView =>
  ({ id, user, group: "staff", address: `10.10.0.${id}`, clientAddress: "203.0.113.2", clientPort: 40000, channel: "dtls", cipher: "AES256-GCM", loginAt: since, connectedSince: since, bytesIn, bytesOut }) as ConnectionView;

describe("web UI live figures", () => {
  test("per-connection rates come from the byte counters' change between two looks", () => {
    const rates = new ConnectionRates();
    expect(rates.update([view("1", "bob", 1000, 0, 1)], 10_000).size).toBe(0);
    const r = rates.update([view("1", "bob", 3000, 500, 1), view("2", "eve", 99, 0, 1)], 12_000);
    expect(r.get("1")).toEqual({ in: 1000, out: 250 });
    expect(r.has("2")).toBe(false);
    // A counter that went down (a new session reusing nothing) never shows a negative rate.
    expect(rates.update([view("1", "bob", 0, 0, 1)], 13_000).get("1")).toEqual({ in: 0, out: 0 });
  });

  test("sorting: by any column, either way; the default is newest first", () => {
    const list = [view("1", "carol", 5, 0, 300), view("2", "alice", 50, 0, 100), view("3", "bob", 500, 0, 200)];
    expect(sortConnections(list, parseSort(undefined, undefined), new Map()).map((c) => c.user)).toEqual(["carol", "bob", "alice"]);
    expect(sortConnections(list, parseSort("user", "asc"), new Map()).map((c) => c.user)).toEqual(["alice", "bob", "carol"]);
    expect(sortConnections(list, parseSort("in", "desc"), new Map()).map((c) => c.user)).toEqual(["bob", "alice", "carol"]);
    const rates = new Map([["1", { in: 900, out: 0 }], ["2", { in: 1, out: 1 }]]);
    expect(sortConnections(list, parseSort("rate", "desc"), rates).map((c) => c.user)).toEqual(["carol", "alice", "bob"]);
    expect(parseSort("nonsense", "up")).toEqual({ key: "since", descending: false });
  });

  test("the connections page sorts, links each header, and shows channel and cipher", async () => {
    const f = uiFixture();
    f.api.connect("zed", "staff");
    f.api.connect("amy", "staff");
    const { cookie } = await f.signIn("alice", "admin");
    const page = await f.request("GET", "/ui/connections?sort=user&dir=asc", { cookie });
    expect(page.text.indexOf(">amy<")).toBeLessThan(page.text.indexOf(">zed<"));
    expect(page.text).toContain('aria-sort="ascending"');
    expect(page.text).toContain("/ui/connections?q=&amp;sort=user&amp;dir=desc");
    expect(page.text).toContain("CSTP · TLSv1.3 TLS_AES_256_GCM_SHA384");
    const desc = await f.request("GET", "/ui/connections?sort=user&dir=desc", { cookie });
    expect(desc.text.indexOf(">zed<")).toBeLessThan(desc.text.indexOf(">amy<"));
  });

  test("the live connections table shows each connection's current rate while its counters move", async () => {
    const f = uiFixture();
    const { id } = f.api.connect("bob", "staff");
    const session = f.api.control.sessions.list().find((s) => s.id === id)!;
    const { cookie } = await f.signIn("alice", "admin");
    const res = await f.request("GET", "/ui/live?view=connections&q=", { cookie, stream: true });
    const events = await readEvents(res.response!, (es) => {
      session.traffic.bytesIn += 100_000;
      session.traffic.bytesOut += 10_000;
      return es.some((e) => /[kMG]B\/s \/ [\d.]+ [kMG]B\/s/.test(e.data));
    });
    expect(events[0]!.data).toMatch(/<td class="num rate">—<\/td>/);
    expect(events.at(-1)!.data).toMatch(/<td class="num rate">[\d.]+ [kMG]B\/s \/ [\d.]+ [kMG]B\/s<\/td>/);
  });

  test("dashboard: logins over the last hour, drops by reason, and warnings (forwarding off, pool, certificate)", async () => {
    const f = uiFixture();
    const control = f.api.control;
    control.events.emit({ type: "auth.success", user: "bob", group: "staff", session: "s1", peer: "203.0.113.9" });
    control.events.emit({ type: "auth.failure", user: "bob", reason: "bad_password", peer: "203.0.113.9" });
    control.events.emit({ type: "auth.failure", user: null, reason: "bad_password", peer: "203.0.113.9" });
    control.runtime!.drops.count("spoofed_source");
    control.runtime!.drops.count("spoofed_source");
    control.runtime!.drops.count("no_route");
    const { cookie } = await f.signIn("alice", "admin");
    const page = await f.request("GET", "/ui", { cookie });
    expect(page.text).toMatch(/id="logins-hour"><div class="label">Logins last hour ok \/ failed<\/div><div class="value">1 \/ 2</);
    expect(page.text).toMatch(/id="password-check"><div class="label">Password check, mean since start<\/div><div class="value">—</);
    expect(page.text).toMatch(/Dropped packets by reason<\/div><ul class="drops"><li>spoofed_source: 2<\/li><li>no_route: 1<\/li>/);
    control.authStats.passwordChecked(40);
    control.authStats.passwordChecked(51);
    // An hour later the window is empty.
    f.advance(61 * 60_000);
    const bea = (await f.signIn("bea", "read")).cookie;
    const later = await f.request("GET", "/ui", { cookie: bea });
    expect(later.text).toMatch(/Logins last hour ok \/ failed<\/div><div class="value">0 \/ 0</);
    expect(later.text).toMatch(/Password check, mean since start<\/div><div class="value">45\.5 ms \(2 checks\)</);
    expect(later.text).toMatch(/id="busy-wait"><div class="label">Busy logins told to wait<\/div><div class="value">—</);
    control.authStats.failure("server_busy");
    const busy = await f.request("GET", "/ui", { cookie: bea });
    expect(busy.text).toMatch(/Busy logins told to wait<\/div><div class="value">2 s \(Retry-After\)</);

    const status = control.status();
    const full = { ...status, pool: { cidr: "10.10.0.0/24", capacity: 253, used: 240 } };
    const now = Date.now();
    const warnings = warningsOf(full, now, now + 3 * 86_400_000 - 1, [{ status: "warn", detail: "net.ipv4.ip_forward = 0", fix: "sysctl -w net.ipv4.ip_forward=1" }, { status: "ok", detail: "fine" }]);
    expect(warnings).toEqual([
      "net.ipv4.ip_forward = 0: sysctl -w net.ipv4.ip_forward=1",
      "The address pool 10.10.0.0/24 is nearly full: 240 of 253 addresses in use.",
      expect.stringContaining("The server certificate expires in 2 day(s)"),
    ]);
  });

  test("the user page: usage per day from the ledger and the quota's state", async () => {
    const f = uiFixture();
    const control = f.api.control;
    await control.users.add({ name: "carol", groups: [] }, "token:ci");
    expect((await control.users.patch("carol", { quota: { bytes: 10_000_000, period: "total", count: "both", atLimit: "block" } }, "token:ci")).ok).toBe(true);
    const today = new Date().toISOString().slice(0, 10);
    f.api.store.usage.addUsage([], [{ user: "carol", day: today, bytesIn: 2_000_000, bytesOut: 4_000_000, packetsIn: 10, packetsOut: 10 }]);
    const { cookie } = await f.signIn("alice", "admin");
    const page = await f.request("GET", "/ui/users/carol", { cookie });
    const usage = page.text.slice(page.text.indexOf('id="usage"'), page.text.indexOf("Audit trail"));
    expect(usage).toContain("2.0 MB from the client, 4.0 MB to it");
    expect(usage).toContain("6.0 MB of 10.0 MB used");
    expect(usage).toContain(`<td>${today}</td>`);
    expect(usage).toMatch(/<meter min="0" max="10000000" value="6000000"/);
    // The uPlot chart's figures ride in a data attribute (no inline script under the CSP), the table above them stays the fallback.
    const data = /<div id="usage-chart" class="chart" role="img" aria-label="[^"]+" data-usage="([^"]+)"><\/div>/.exec(usage)?.[1];
    expect(JSON.parse((data ?? "").replaceAll("&quot;", '"'))).toEqual({ days: [today], rx: [2_000_000], tx: [4_000_000] });
    expect(usage.indexOf('id="usage-chart"')).toBeLessThan(usage.indexOf("<table>"));
    const empty = await f.request("GET", "/ui/users/bob-none", { cookie });
    expect(empty.status).not.toBe(500);
  });

  test("the user page: account, live sessions, audit trail newest first, the usage slot; a read admin cannot edit", async () => {
    const f = uiFixture();
    const control = f.api.control;
    await control.groups.add("staff", {});
    await control.users.add({ name: "bob", groups: [] }, "token:ci");
    await control.users.add({ name: "bobby", groups: [] }, "token:ci");
    f.api.connect("bob", "staff");
    f.api.connect("bobby", "staff");
    const { cookie, csrf } = await f.signIn("alice", "admin");
    expect((await f.request("POST", "/ui/users/bob/edit", { cookie, form: { _csrf: csrf, groups: "staff", routes: "198.51.100.0/24" } })).status).toBe(303);
    expect(control.users.get("bob")).toMatchObject({ ok: true, value: { groups: ["staff"], routes: ["198.51.100.0/24"] } });
    const page = await f.request("GET", "/ui/users/bob", { cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain("User bob saved");
    expect(page.text).toContain('sse-connect="/ui/live?view=connections&amp;user=bob"');
    // bob's session only (not bobby's).
    expect(page.text.match(/data-session=/g)).toHaveLength(1);
    expect(page.text).toContain('id="usage"');
    const trail = page.text.slice(page.text.indexOf("Audit trail"));
    expect(trail.indexOf("user.update")).toBeLessThan(trail.indexOf("user.create"));
    expect(trail).toContain("token:ci");
    const bad = await f.request("POST", "/ui/users/bob/edit", { cookie, form: { _csrf: csrf, groups: "nosuch", routes: "" } });
    expect(bad.text).toContain('id="f-groups-error" role="alert">entry 1: no group named nosuch');

    const reader = await f.signIn("rita", "read");
    const read = await f.request("GET", "/ui/users/bob", { cookie: reader.cookie });
    expect(read.text).not.toContain("Save user");
    expect(read.text).not.toContain("Disconnect");
    expect((await f.request("POST", "/ui/users/bob/edit", { cookie: reader.cookie, form: { _csrf: reader.csrf, groups: "" } })).status).toBe(403);
    expect((await f.request("GET", "/ui/users/nosuch", { cookie })).status).toBe(303);
  });
});
