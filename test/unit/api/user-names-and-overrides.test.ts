import { describe, expect, test } from "bun:test";
import { userNameProblem } from "../../../src/control/names.ts";
import { apiFixture, paths } from "./fixture.ts";

const odd = "ä/b:c";

describe("user names as ocserv accepts them", () => {
  test("printable UTF-8 with '/', ':' and spaces is a name; control characters, edge spaces and 129 bytes are not", () => {
    for (const name of [odd, "Jürgen Müller", "domain\\user", "a".repeat(128), "ä".repeat(64), "x@y", "<&'\">"]) expect(userNameProblem(name)).toBeUndefined();
    for (const name of ["", " lead", "trail ", "tab\there", "new\nline", "nul\0", "del\x7f", "c1\x85", "sep\u2028", "a".repeat(129), "ä".repeat(64) + "a"]) {
      expect(userNameProblem(name)).toBeString();
    }
  });

  test("the API takes 'ä/b:c' in the body and, percent-encoded, in the path; the audit keeps the raw name", async () => {
    const f = apiFixture();
    const created = await f.request("POST", "/api/v1/users", { name: odd, password: "pw" });
    expect(created.status).toBe(201);
    expect(created.body.name).toBe(odd);
    const path = `/api/v1/users/${encodeURIComponent(odd)}`;
    expect((await f.request("GET", path)).body.name).toBe(odd);
    const patched = await f.request("PATCH", path, { disabled: true });
    expect(patched.status).toBe(200);
    expect(f.control.audit.list().map((a) => [a.action, a.target])).toEqual([
      ["user.create", odd],
      ["user.update", odd],
    ]);
    expect((await f.request("PUT", `/api/v1/users/${encodeURIComponent("x:y/z ü")}`, {})).status).toBe(201);
    expect((await f.request("DELETE", path)).status).toBe(204);
    expect((await f.request("GET", "/api/v1/users")).body.map((u: { name: string }) => u.name)).toEqual(["x:y/z ü"]);
  });

  test("a 129-byte name is refused with the limit in the message, in the body and in the path", async () => {
    const f = apiFixture();
    const long = "ä".repeat(64) + "a";
    const bad = await f.request("POST", "/api/v1/users", { name: long });
    expect(bad.status).toBe(400);
    expect(paths(bad.body)).toEqual(["name"]);
    expect(bad.text).toContain("128 bytes");
    expect((await f.request("PUT", `/api/v1/users/${encodeURIComponent(long)}`, {})).status).toBe(400);
    expect((await f.request("GET", "/api/v1/users")).body).toEqual([]);
  });
});

describe("per-user policy overrides through the API", () => {
  test("set on create, shown, changed by PATCH, removed by null", async () => {
    const f = apiFixture();
    const created = await f.request("POST", "/api/v1/users", { name: "dora", dns: ["203.0.113.53"], splitDns: ["corp.example"], dpdSeconds: 10, mtu: 1300, maxSessionsPerUser: 1, excludeRoutes: ["198.51.100.7/32"] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ dns: ["203.0.113.53"], splitDns: ["corp.example"], dpdSeconds: 10, mtu: 1300, maxSessionsPerUser: 1, excludeRoutes: ["198.51.100.7/32"] });
    const patched = await f.request("PATCH", "/api/v1/users/dora", { dns: null, idleTimeoutSeconds: 120 });
    expect(patched.status).toBe(200);
    expect(patched.body.dns).toBeUndefined();
    expect(patched.body).toMatchObject({ splitDns: ["corp.example"], idleTimeoutSeconds: 120, dpdSeconds: 10 });
    expect(f.control.users.overridesOf(f.control.store.getUser("dora")!)).toMatchObject({ splitDns: ["corp.example"], idleTimeoutSeconds: 120 });
  });

  test("bad overrides are named by path and change nothing", async () => {
    const f = apiFixture();
    const bad = await f.request("POST", "/api/v1/users", { name: "eve", dns: ["not-an-ip"], splitDns: ["bad domain"], mtu: 100 });
    expect(bad.status).toBe(400);
    expect(paths(bad.body).sort()).toEqual(["dns.0", "mtu", "splitDns.0"]);
    expect((await f.request("GET", "/api/v1/users")).body).toEqual([]);
  });
});
