import { describe, expect, test } from "bun:test";
import { apiFixture, paths } from "./fixture.ts";

describe("API /api/v1/groups", () => {
  test("create with the whole policy, get, list", async () => {
    const f = apiFixture();
    const policy = {
      routes: ["198.51.100.0/24"],
      excludeRoutes: ["198.51.100.128/25"],
      dns: ["198.51.100.53"],
      defaultDomain: "corp.example",
      mtu: 1300,
      dpdSeconds: 20,
      keepaliveSeconds: 15,
      mobileDpdSeconds: 300,
      idleTimeoutSeconds: 600,
      sessionTimeoutSeconds: 86400,
      maxSessionsPerUser: 2,
    };
    const created = await f.request("POST", "/api/v1/groups", { name: "staff", policy });
    expect(created.status).toBe(201);
    expect(created.body.policy).toEqual(policy);
    expect((await f.request("GET", "/api/v1/groups/staff")).body.policy).toEqual(policy);
    expect((await f.request("GET", "/api/v1/groups")).body).toHaveLength(1);
    expect((await f.request("POST", "/api/v1/groups", { name: "staff" })).status).toBe(409);
  });

  test("every invalid field is reported with its path; nothing is stored", async () => {
    const f = apiFixture();
    const bad = await f.request("PUT", "/api/v1/groups/x", { routes: ["10.0.0.0/33", "ok"], dns: ["1.1.1.1", "2.2.2.2", "3.3.3.3", "4.4.4.4"], mtu: 10, colour: "red" });
    expect(bad.status).toBe(400);
    expect(paths(bad.body).sort()).toEqual(["colour", "dns", "mtu", "routes.0", "routes.1"]);
    expect((await f.request("GET", "/api/v1/groups/x")).status).toBe(404);
    const badName = await f.request("PUT", "/api/v1/groups/has%20space", {});
    expect(badName.status).toBe(400);
  });

  test("PUT is idempotent, PATCH merges (null removes), DELETE is 204 then 404", async () => {
    const f = apiFixture();
    expect((await f.request("PUT", "/api/v1/groups/ops", { routes: ["10.0.0.0/8"], mtu: 1300 })).status).toBe(201);
    const again = await f.request("PUT", "/api/v1/groups/ops", { routes: ["10.0.0.0/8"], mtu: 1300 });
    expect(again.status).toBe(200);
    expect(f.control.audit.list().map((a) => a.action)).toEqual(["group.create"]);
    const patched = await f.request("PATCH", "/api/v1/groups/ops", { mtu: null, dns: ["10.0.0.53"] });
    expect(patched.status).toBe(200);
    expect(patched.body.policy).toEqual({ routes: ["10.0.0.0/8"], excludeRoutes: [], dns: ["10.0.0.53"] });
    const badPatch = await f.request("PATCH", "/api/v1/groups/ops", { mtu: "big" });
    expect(badPatch.status).toBe(400);
    expect(paths(badPatch.body)).toEqual(["mtu"]);
    expect((await f.request("DELETE", "/api/v1/groups/ops")).status).toBe(204);
    expect((await f.request("DELETE", "/api/v1/groups/ops")).status).toBe(404);
    expect(f.events.map((e) => e.type)).toEqual(["group.created", "group.updated", "group.deleted"]);
  });

  test("a group with members cannot be deleted", async () => {
    const f = apiFixture();
    await f.request("PUT", "/api/v1/groups/staff", {});
    await f.request("PUT", "/api/v1/users/alice", { groups: ["staff"] });
    const r = await f.request("DELETE", "/api/v1/groups/staff");
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("group_in_use");
  });
});
