/**
 * PUT accepts the document GET returned: an operator may GET a resource, edit one field and PUT the
 * whole thing back. Read-only fields sent back unchanged are ignored; a changed one is refused with
 * its path (it cannot be set that way), so nothing is silently dropped.
 */
import { describe, expect, test } from "bun:test";
import { apiFixture } from "./fixture.ts";

describe("PUT accepts what GET returned", () => {
  test("users: the GET view with one field edited replaces the user; read-only fields are ignored", async () => {
    const f = apiFixture();
    await f.request("POST", "/api/v1/groups", { name: "staff", policy: {} });
    await f.request("POST", "/api/v1/users", { name: "alice", groups: ["staff"], password: "pw-alice-1" });
    const view = (await f.request("GET", "/api/v1/users/alice")).body;
    const put = await f.request("PUT", "/api/v1/users/alice", { ...view, routes: ["192.0.2.0/24"] });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: "alice", routes: ["192.0.2.0/24"], hasPassword: true, createdAt: view.createdAt });
  });

  test("users: a changed read-only field is refused with its path, and nothing changes", async () => {
    const f = apiFixture();
    await f.request("POST", "/api/v1/users", { name: "alice", password: "pw-alice-1" });
    const view = (await f.request("GET", "/api/v1/users/alice")).body;
    const put = await f.request("PUT", "/api/v1/users/alice", { ...view, createdAt: 5, routes: ["192.0.2.0/24"] });
    expect(put.status).toBe(400);
    expect(put.body.error.code).toBe("invalid_input");
    expect(put.body.error.details).toEqual([expect.objectContaining({ path: "createdAt" })]);
    const renamed = await f.request("PUT", "/api/v1/users/alice", { ...view, name: "bob" });
    expect(renamed.status).toBe(400);
    expect(renamed.body.error.details).toEqual([expect.objectContaining({ path: "name" })]);
    expect((await f.request("GET", "/api/v1/users/alice")).body.routes).toEqual([]);
  });

  test("users: a GET view PUT under a new name creates that user (the copy's read-only fields are ignored)", async () => {
    const f = apiFixture();
    await f.request("POST", "/api/v1/users", { name: "alice", password: "pw-alice-1", routes: ["192.0.2.0/24"] });
    const { name: _name, ...view } = (await f.request("GET", "/api/v1/users/alice")).body;
    const put = await f.request("PUT", "/api/v1/users/carol", view);
    expect(put.status).toBe(201);
    expect(put.body).toMatchObject({ name: "carol", routes: ["192.0.2.0/24"], hasPassword: false });
  });

  test("groups: the GET view (name, policy, members, createdAt) with the policy edited replaces the policy", async () => {
    const f = apiFixture();
    await f.request("POST", "/api/v1/groups", { name: "staff", policy: { routes: ["198.51.100.0/24"] } });
    await f.request("POST", "/api/v1/users", { name: "alice", groups: ["staff"] });
    const view = (await f.request("GET", "/api/v1/groups/staff")).body;
    const put = await f.request("PUT", "/api/v1/groups/staff", { ...view, policy: { ...view.policy, defaultDomain: "corp.example" } });
    expect(put.status).toBe(200);
    expect(put.body.policy).toMatchObject({ routes: ["198.51.100.0/24"], defaultDomain: "corp.example" });
    expect(put.body.members).toEqual(["alice"]);
    const members = await f.request("PUT", "/api/v1/groups/staff", { ...view, members: [] });
    expect(members.status).toBe(400);
    expect(members.body.error.details).toEqual([expect.objectContaining({ path: "members" })]);
  });

  test("groups: the bare policy is still accepted as before", async () => {
    const f = apiFixture();
    const put = await f.request("PUT", "/api/v1/groups/staff", { routes: ["198.51.100.0/24"] });
    expect(put.status).toBe(201);
    expect(put.body.policy.routes).toEqual(["198.51.100.0/24"]);
  });

  test("config: the document GET returned is accepted by PUT", async () => {
    const f = apiFixture();
    const doc = (await f.request("GET", "/api/v1/config")).body;
    const put = await f.request("PUT", "/api/v1/config", doc);
    expect(put.status).toBe(200);
  });
});
