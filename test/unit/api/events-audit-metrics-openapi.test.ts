import { describe, expect, test } from "bun:test";
import { createApiApp } from "../../../src/api/app.ts";
import { ERROR_CODES } from "../../../src/api/errors.ts";
import { apiFixture, type Fixture } from "./fixture.ts";

/** Reads SSE frames from a streaming response until `until` says stop. */
async function readEvents(res: Response, until: (frames: { event: string; data: any }[]) => boolean) {
  const reader = res.body!.getReader();
  const frames: { event: string; data: any }[] = [];
  let buffer = "";
  while (!until(frames)) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += new TextDecoder().decode(value);
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: ?(.*)$/m.exec(block)?.[1];
      const data = /^data: ?(.*)$/m.exec(block)?.[1];
      if (event && data) frames.push({ event, data: JSON.parse(data) });
    }
  }
  await reader.cancel();
  return frames;
}

const stream = (f: Fixture, token: string) => createApiApp(f.control).request("/api/v1/events", { headers: { authorization: `Bearer ${token}` } });

describe("API /api/v1/events", () => {
  test("a read token follows typed events: ready first, then changes and sessions as they happen", async () => {
    const f = apiFixture();
    const res = await stream(f, f.reader);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const done = readEvents(res, (frames) => frames.some((x) => x.event === "session.down"));
    // Wait for the subscription before making changes: the ready frame comes first.
    while (f.control.events.subscriberCount < 2) await Bun.sleep(1);
    await f.request("PUT", "/api/v1/users/alice", {});
    const s = f.connect("alice", "");
    await f.request("PATCH", "/api/v1/users/alice", { disabled: true });
    const frames = await done;
    expect(frames[0]!.event).toBe("ready");
    expect(frames.slice(1).map((x) => x.event)).toEqual(["user.created", "session.up", "user.updated", "session.down"]);
    expect(frames.at(-1)!.data).toMatchObject({ type: "session.down", session: s.id, user: "alice", reason: "admin" });
    expect(frames[1]!.data).toMatchObject({ type: "user.created", name: "alice", actor: "test-admin" });
  });

  test("without a running server there is no stream (409 not_running)", async () => {
    const f = apiFixture({ running: false });
    const r = await f.request("GET", "/api/v1/events");
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("not_running");
  });

  test("auth outcomes are events too", async () => {
    const f = apiFixture();
    f.control.events.emit({ type: "auth.failure", user: "mallory", reason: "bad_password", peer: "203.0.113.9:5000" });
    expect(f.events.at(-1)).toMatchObject({ type: "auth.failure", reason: "bad_password" });
  });
});

describe("API /api/v1/audit", () => {
  test("every change, with who, what, when, before and after; paging with after and limit", async () => {
    const f = apiFixture();
    await f.request("PUT", "/api/v1/groups/staff", { routes: ["10.0.0.0/8"] });
    await f.request("PATCH", "/api/v1/groups/staff", { mtu: 1300 });
    await f.request("DELETE", "/api/v1/groups/staff");
    const all = await f.request("GET", "/api/v1/audit", undefined, { token: f.reader });
    expect(all.status).toBe(200);
    expect(all.body.map((e: { action: string }) => e.action)).toEqual(["group.create", "group.update", "group.delete"]);
    expect(all.body[1]).toMatchObject({ actor: "test-admin", target: "staff", before: { policy: { routes: ["10.0.0.0/8"] } }, after: { policy: { mtu: 1300 } } });
    expect(all.body[2].after).toBeNull();
    expect(typeof all.body[0].at).toBe("number");
    const page = await f.request("GET", `/api/v1/audit?after=${all.body[0].id}&limit=1`);
    expect(page.body.map((e: { action: string }) => e.action)).toEqual(["group.update"]);
    expect((await f.request("GET", "/api/v1/audit?limit=abc")).status).toBe(400);
  });
});

describe("/metrics", () => {
  test("Prometheus text behind a token: sessions, traffic, auth by reason, channel share, drops", async () => {
    const f = apiFixture();
    f.connect("alice", "staff");
    f.control.authStats.failure("bad_password");
    f.control.authStats.passwordChecked(40);
    f.control.authStats.passwordChecked(60);
    f.control.runtime!.drops.count("spoofed_source");
    f.control.runtime!.drops.ruleCounts("staff").set(2, 3).set("no_allow", 1);
    expect((await f.request("GET", "/metrics", undefined, { token: null })).status).toBe(401);
    for (const path of ["/metrics", "/api/v1/metrics"]) {
      const r = await f.request("GET", path, undefined, { token: f.reader });
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toContain("text/plain");
      expect(r.text).toContain('gw_sessions{state="connected"} 1');
      expect(r.text).toContain('gw_sessions_by_channel{channel="cstp"} 1');
      expect(r.text).toContain("gw_dtls_share 0");
      expect(r.text).toContain('gw_traffic_bytes_total{direction="in"} 1000');
      expect(r.text).toContain('gw_auth_failure_total{reason="bad_password"} 1');
      expect(r.text).toContain("\ngw_password_check_seconds_total 0.1\n");
      expect(r.text).toContain("\ngw_password_checks_total 2\n");
      expect(r.text).toContain('gw_drops_total{reason="spoofed_source"} 1');
      expect(r.text).toContain('gw_policy_drops_total{group="staff",rule="2"} 3');
      expect(r.text).toContain('gw_policy_drops_total{group="staff",rule="no_allow"} 1');
      expect(r.text).toContain("gw_connections_unauthenticated 2");
      expect(r.text).toContain('gw_connections_refused_total{reason="per_address_limit"} 3');
      expect(r.text).toContain('gw_connections_timed_out_total{reason="head"} 1');
      expect(r.text).toMatch(/# TYPE gw_traffic_packets_total counter/);
    }
  });
});

describe("/api/v1/openapi.json", () => {
  test("documents every route with its schemas and error codes, generated from the zod schemas", async () => {
    const f = apiFixture();
    const r = await f.request("GET", "/api/v1/openapi.json", undefined, { token: f.reader });
    expect(r.status).toBe(200);
    const doc = r.body;
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths).sort()).toEqual(
      ["/api/v1/admins", "/api/v1/admins/{name}", "/api/v1/admins/{name}/otp", "/api/v1/admins/{name}/password", "/api/v1/audit", "/api/v1/bans", "/api/v1/bans/{target}", "/api/v1/config", "/api/v1/config/check", "/api/v1/connections", "/api/v1/connections/{id}", "/api/v1/drain", "/api/v1/events", "/api/v1/groups", "/api/v1/groups/{name}", "/api/v1/groups/{name}/rules", "/api/v1/groups/{name}/rules/{index}", "/api/v1/openapi.json", "/api/v1/policy/trace", "/api/v1/reload", "/api/v1/status", "/api/v1/tokens", "/api/v1/tokens/{name}", "/api/v1/users", "/api/v1/users/{name}", "/api/v1/users/{name}/otp", "/api/v1/users/{name}/password-hash", "/api/v1/users/{name}/rules", "/api/v1/users/{name}/rules/{index}", "/api/v1/users/{name}/usage", "/api/v1/users/{name}/usage/reset", "/metrics"].sort(),
    );
    const putUser = doc.paths["/api/v1/users/{name}"].put;
    expect(putUser.requestBody.content["application/json"].schema.additionalProperties).toBe(false);
    expect(Object.keys(putUser.requestBody.content["application/json"].schema.properties)).toContain("password");
    expect(putUser.responses["401"].description).toContain("unauthorized");
    expect(putUser.responses["403"].description).toContain("forbidden");
    expect(putUser.responses["400"].description).toContain("invalid_input");
    expect(doc.paths["/api/v1/users/{name}"].get.responses["200"].content["application/json"].schema.properties.password).toBeUndefined();
    expect(doc.paths["/api/v1/users/{name}"].delete.responses["404"].description).toContain("user_not_found");
    expect(doc.components.schemas.Error.properties.error.required).toEqual(["code", "message"]);
    expect(Object.keys(doc["x-error-codes"]).sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });
});
