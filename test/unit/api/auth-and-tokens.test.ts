import { describe, expect, test } from "bun:test";
import { apiRoutes as allRouteDocs } from "../../../src/api/route-table.ts";
import { apiFixture, paths } from "./fixture.ts";

/** Every documented route, with a concrete path. */
const routes = allRouteDocs.map((d) => ({ method: d.method.toUpperCase(), path: d.path === "/metrics" ? "/metrics" : `/api/v1${d.path.replace(/\{\w+\}/g, "x")}`, scope: d.scope }));

describe("API authentication and scopes", () => {
  test("every route answers 401 with the error body without a token, and with a bad one", async () => {
    const f = apiFixture();
    for (const r of routes) {
      for (const token of [null, "gw_not-a-token"]) {
        const res = await f.request(r.method, r.path, r.method === "GET" || r.method === "DELETE" ? undefined : {}, { token });
        expect({ route: `${r.method} ${r.path}`, status: res.status, code: res.body?.error?.code }).toEqual({ route: `${r.method} ${r.path}`, status: 401, code: "unauthorized" });
        expect(res.headers.get("www-authenticate")).toContain("Bearer");
      }
    }
  });

  test("a read token may read everything and change nothing (403)", async () => {
    const f = apiFixture();
    // The event stream never ends: it has its own test (events.test.ts).
    for (const r of routes.filter((r) => r.path !== "/api/v1/events")) {
      const res = await f.request(r.method, r.path, r.method === "GET" || r.method === "DELETE" ? undefined : {}, { token: f.reader });
      if (r.scope === "admin") {
        expect({ route: `${r.method} ${r.path}`, status: res.status, code: res.body?.error?.code }).toEqual({ route: `${r.method} ${r.path}`, status: 403, code: "forbidden" });
      } else {
        expect({ route: `${r.method} ${r.path}`, status: res.status === 403 || res.status === 401 }).toEqual({ route: `${r.method} ${r.path}`, status: false });
      }
    }
    expect(f.control.audit.list()).toEqual([]);
  });

  test("unknown routes are 404 in the error model", async () => {
    const f = apiFixture();
    const r = await f.request("GET", "/api/v1/nope");
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe("not_found");
  });
});

describe("API /api/v1/tokens", () => {
  test("create shows the secret once; it works; list never shows it; revoke is 204 then 404 and the secret stops working", async () => {
    const f = apiFixture();
    const created = await f.request("POST", "/api/v1/tokens", { name: "ci", scope: "admin" });
    expect(created.status).toBe(201);
    const secret: string = created.body.secret;
    expect(secret).toMatch(/^gw_[A-Za-z0-9_-]{43}$/);
    expect(f.control.store.listApiTokens().some((t) => t.secretHash.includes(secret))).toBe(false);
    const list = await f.request("GET", "/api/v1/tokens");
    expect(list.text).not.toContain(secret);
    expect(list.body.map((t: { name: string }) => t.name)).toContain("ci");
    expect((await f.request("GET", "/api/v1/status", undefined, { token: secret })).status).toBe(200);
    expect((await f.request("GET", "/api/v1/tokens/ci")).body).toMatchObject({ name: "ci", scope: "admin", expiresAt: null });
    expect((await f.request("POST", "/api/v1/tokens", { name: "ci", scope: "read" })).status).toBe(409);
    expect((await f.request("DELETE", "/api/v1/tokens/ci")).status).toBe(204);
    expect((await f.request("DELETE", "/api/v1/tokens/ci")).status).toBe(404);
    expect((await f.request("GET", "/api/v1/status", undefined, { token: secret })).status).toBe(401);
    expect(f.events.map((e) => e.type)).toEqual(["token.created", "token.revoked"]);
    expect(f.control.audit.list().map((a) => [a.actor, a.action, a.target])).toEqual([
      ["test-admin", "token.create", "ci"],
      ["test-admin", "token.revoke", "ci"],
    ]);
  });

  test("bad scope, bad name, past expiry and unknown fields are refused with paths", async () => {
    const f = apiFixture();
    const bad = await f.request("POST", "/api/v1/tokens", { name: "a b", scope: "root", lifetime: 3 });
    expect(bad.status).toBe(400);
    expect(paths(bad.body).sort()).toEqual(["lifetime", "name", "scope"]);
    const reserved = await f.request("POST", "/api/v1/tokens", { name: "local-cli", scope: "admin" });
    expect(reserved.status).toBe(400);
    expect(paths(reserved.body)).toEqual(["name"]);
    const past = await f.request("POST", "/api/v1/tokens", { name: "old", scope: "read", expiresAt: Date.now() - 1000 });
    expect(past.status).toBe(400);
    expect(paths(past.body)).toEqual(["expiresAt"]);
  });

  test("an expired token is refused", async () => {
    const f = apiFixture();
    const created = await f.request("POST", "/api/v1/tokens", { name: "short", scope: "read", expiresAt: Date.now() + 60_000 });
    expect(created.status).toBe(201);
    expect(f.control.tokens.authenticate(created.body.secret)).toMatchObject({ name: "short" });
    // Moving the clock is the store's business: rewrite the expiry as if the minute had passed.
    const record = f.control.store.listApiTokens().find((t) => t.name === "short")!;
    f.control.store.deleteApiToken(record.id);
    f.control.store.insertApiToken({ ...record, expiresAt: Date.now() - 1 });
    expect((await f.request("GET", "/api/v1/status", undefined, { token: created.body.secret })).status).toBe(401);
  });
});

describe("API request bodies", () => {
  test("invalid JSON is 400 invalid_json; a wrong content type is 415; an oversized body is 413", async () => {
    const f = apiFixture();
    const badJson = await f.request("POST", "/api/v1/users", undefined, { raw: '{"name": "x",' });
    expect(badJson.status).toBe(400);
    expect(badJson.body.error.code).toBe("invalid_json");
    const text = await f.request("POST", "/api/v1/users", undefined, { raw: "name=x", contentType: "application/x-www-form-urlencoded" });
    expect(text.status).toBe(415);
    expect(text.body.error.code).toBe("unsupported_media_type");
    const big = await f.request("POST", "/api/v1/users", undefined, { raw: JSON.stringify({ name: "x", routes: Array(20000).fill("10.0.0.0/8") }) });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe("body_too_large");
    expect((await f.request("GET", "/api/v1/users")).body).toEqual([]);
  });

  test("an array where an object belongs is a validation error, not a crash", async () => {
    const f = apiFixture();
    const r = await f.request("PUT", "/api/v1/groups/x", [1, 2]);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("invalid_input");
  });
});
