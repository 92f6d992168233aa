import { describe, expect, test } from "bun:test";
import { readEvents } from "./sse-reader.ts";
import { uiFixture } from "./ui-fixture.ts";

describe("web UI live stream", () => {
  test("dashboard: stats and rates every tick, and control-plane events as list items, escaped", async () => {
    const f = uiFixture();
    const { cookie } = await f.signIn("alice", "admin");
    const res = await f.request("GET", "/ui/live?view=dashboard", { cookie, stream: true });
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    f.api.connect("bob", "staff");
    f.api.control.events.emit({ type: "auth.failure", user: "<b>x</b>", reason: "bad_password", peer: "203.0.113.9" });
    const failure = (e: { event: string; data: string }) => e.event === "gwevent" && e.data.includes("login failed");
    const events = await readEvents(res.response!, (es) => es.some(failure) && es.filter((e) => e.event === "rates").length >= 2);
    const stats = events.find((e) => e.event === "stats")!;
    expect(stats.data).toContain('id="live-sessions"');
    expect(stats.data).toMatch(/Live sessions<\/div><div class="value">1</);
    const rates = JSON.parse(events.find((e) => e.event === "rates")!.data);
    expect(rates).toMatchObject({ t: expect.any(Number), in: expect.any(Number), out: expect.any(Number) });
    expect(events.some((e) => e.event === "gwevent" && e.data.includes("bob connected over CSTP"))).toBe(true);
    const item = events.find(failure)!;
    expect(item.data).toContain("login failed for &lt;b&gt;x&lt;/b&gt;");
  });

  test("connections: the table body, again when it changed", async () => {
    const f = uiFixture();
    const { cookie } = await f.signIn("alice", "admin");
    const res = await f.request("GET", "/ui/live?view=connections&q=", { cookie, stream: true });
    let added = false;
    const events = await readEvents(res.response!, (es) => {
      if (es.length === 1 && !added) {
        f.api.connect("bob", "staff");
        added = true;
      }
      return es.length >= 2;
    });
    expect(events.map((e) => e.event)).toEqual(["connections", "connections"]);
    expect(events[0]!.data).toContain("No live sessions.");
    expect(events[1]!.data).toContain(`<td><a href="/ui/users/bob">bob</a></td>`);
  });

  test("connections: a stream with no news sends a comment now and then, so the server does not close it as idle", async () => {
    const f = uiFixture({ liveKeepaliveMs: 100 });
    const { cookie } = await f.signIn("alice", "admin");
    const res = await f.request("GET", "/ui/live?view=connections&q=", { cookie, stream: true });
    const events = await readEvents(res.response!, (es) => es.filter((e) => e.event === "comment").length >= 2);
    // The table once (nothing changes after), then only comments.
    expect(events[0]!.event).toBe("connections");
    expect(events.slice(1).every((e) => e.event === "comment")).toBe(true);
  });

  test("without a session there is no stream", async () => {
    const f = uiFixture();
    const res = await f.request("GET", "/ui/live?view=dashboard");
    expect(res.status).toBe(303);
  });
});
