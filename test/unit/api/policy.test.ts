import { describe, expect, test } from "bun:test";
import { apiFixture, paths } from "./fixture.ts";

const web = { action: "allow", to: "198.51.100.0/24", proto: "tcp", ports: "443", description: "intranet web" };
const dns = { action: "allow", to: "198.51.100.53/32", proto: "udp", ports: "53" };
const ssh = { action: "allow", to: "198.51.100.22/32", proto: "tcp", ports: "22" };

describe("access rules through the API", () => {
  test("bad rules are refused with the field's path, in every place a rule is written; nothing is stored", async () => {
    const f = apiFixture();
    await f.request("PUT", "/api/v1/groups/staff", {});
    await f.request("PUT", "/api/v1/users/alice", { groups: ["staff"] });
    const badPost = await f.request("POST", "/api/v1/groups/staff/rules", { action: "allow", to: "198.51.100.0/33", proto: "any", ports: "443" });
    expect(badPost.status).toBe(400);
    expect(paths(badPost.body).sort()).toEqual(["ports", "to"]);
    expect(badPost.body.error.message).toContain("ports apply to tcp or udp only");
    const badPut = await f.request("PUT", "/api/v1/groups/staff", { rules: [web, { action: "allow", to: "198.51.100.1/32", proto: "tcp", ports: "70000" }] });
    expect(paths(badPut.body)).toEqual(["rules.1.ports"]);
    const badUser = await f.request("PATCH", "/api/v1/users/alice", { rules: [{ action: "maybe", to: "198.51.100.1/32", proto: "icmp" }], rateUp: "fast" });
    expect(badUser.status).toBe(400);
    expect(paths(badUser.body).sort()).toEqual(["rateUp", "rules.0.action"]);
    const badUserRule = await f.request("POST", "/api/v1/users/alice/rules", { action: "deny", to: "nowhere", proto: "udp" });
    expect(paths(badUserRule.body)).toEqual(["to"]);
    expect((await f.request("GET", "/api/v1/groups/staff/rules")).body.starter).toBe(true);
    expect((await f.request("GET", "/api/v1/users/alice")).body.rules).toBeUndefined();
  });

  test("group rules: add writes the starter rule out and warns it shadows the new one; del by number; audited", async () => {
    const f = apiFixture();
    await f.request("PUT", "/api/v1/groups/staff", {});
    const start = await f.request("GET", "/api/v1/groups/staff/rules");
    expect(start.body).toEqual({ rules: [{ index: 1, rule: { action: "allow", to: "0.0.0.0/0", proto: "any", description: "starter rule: allow everything outbound" } }], starter: true, warnings: [] });
    const added = await f.request("POST", "/api/v1/groups/staff/rules", web);
    expect(added.status).toBe(201);
    expect(added.body.starter).toBe(false);
    expect(added.body.rules.map((r: { index: number; rule: { to: string } }) => `${r.index} ${r.rule.to}`)).toEqual(["1 0.0.0.0/0", "2 198.51.100.0/24"]);
    expect(added.body.warnings).toEqual([{ source: "group", index: 2, message: expect.stringContaining("rule 2 (allow tcp 198.51.100.0/24 port 443 (intranet web)) never decides anything: rule 1") }]);
    expect((await f.request("GET", "/api/v1/groups/staff")).body.warnings).toHaveLength(1);
    const deleted = await f.request("DELETE", "/api/v1/groups/staff/rules/1");
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ rules: [{ index: 1, rule: web }], starter: false, warnings: [] });
    expect((await f.request("GET", "/api/v1/groups/staff")).body.warnings).toBeUndefined();
    const missing = await f.request("DELETE", "/api/v1/groups/staff/rules/2");
    expect([missing.status, missing.body.error.code]).toEqual([404, "rule_not_found"]);
    expect(missing.body.error.message).toContain("rules are numbered 1-1");
    expect((await f.request("POST", "/api/v1/groups/nope/rules", web)).status).toBe(404);
    expect((await f.request("POST", "/api/v1/groups/staff/rules", web, { token: f.reader })).status).toBe(403);
    expect(f.control.audit.list().map((a) => a.action)).toEqual(["group.create", "group.update", "group.update"]);
  });

  test("user rules and rates: stored as overrides, shown on the user, shadowed ones named per group", async () => {
    const f = apiFixture();
    await f.request("PUT", "/api/v1/groups/staff", { rules: [web, dns] });
    await f.request("PUT", "/api/v1/users/alice", { groups: ["staff"], rateUp: "20mbit" });
    const added = await f.request("POST", "/api/v1/users/alice/rules", ssh);
    expect(added.status).toBe(201);
    expect(added.body).toEqual({ rules: [{ index: 1, rule: ssh }], starter: false, warnings: [] });
    const shadowed = await f.request("POST", "/api/v1/users/alice/rules", { action: "allow", to: "198.51.100.10/32", proto: "tcp", ports: "443" });
    expect(shadowed.body.warnings).toEqual([
      { source: "user", index: 2, group: "staff", message: expect.stringContaining("user rule 2 (allow tcp 198.51.100.10/32 port 443) never decides anything: group rule 1") },
    ]);
    const alice = await f.request("GET", "/api/v1/users/alice");
    expect(alice.body.rules).toHaveLength(2);
    expect(alice.body.rateUp).toBe(20_000_000);
    expect(alice.body.warnings).toHaveLength(1);
    const patched = await f.request("PATCH", "/api/v1/users/alice", { rateUp: null, rateDown: 5_000_000 });
    expect([patched.body.rateUp, patched.body.rateDown, patched.body.rules.length]).toEqual([undefined, 5_000_000, 2]);
    expect((await f.request("DELETE", "/api/v1/users/alice/rules/2")).body.rules).toEqual([{ index: 1, rule: ssh }]);
    expect((await f.request("DELETE", "/api/v1/users/alice/rules/1")).body.rules).toEqual([]);
    expect((await f.request("GET", "/api/v1/users/alice")).body.rules).toBeUndefined();
  });
});

describe("policy tests refuse a change that breaks them", () => {
  const tests = [
    { user: "alice", to: "198.51.100.22", proto: "tcp", port: 22, expect: "allow" },
    { to: "198.51.100.10", proto: "tcp", port: 443, expect: "allow" },
    { to: "198.51.100.10", proto: "tcp", port: 22, expect: "deny" },
  ];

  test("a group whose own tests fail is not created; a patch or rule change that breaks them changes nothing", async () => {
    const f = apiFixture();
    await f.request("PUT", "/api/v1/users/alice", { rules: [ssh] });
    const failing = await f.request("POST", "/api/v1/groups", { name: "staff", policy: { rules: [dns], tests } });
    expect([failing.status, failing.body.error.code]).toEqual([422, "policy_test_failed"]);
    expect(failing.body.error.details).toEqual([{ path: "tests.1", message: expect.stringContaining("tests[1] fails: a member may reach 198.51.100.10 tcp/443, but") }]);
    expect((await f.request("GET", "/api/v1/groups/staff")).status).toBe(404);

    // alice's own rule makes her test pass: the group's rules and hers are evaluated together.
    const created = await f.request("PUT", "/api/v1/groups/staff", { rules: [web, dns], tests });
    expect(created.status).toBe(201);
    const broken = await f.request("PATCH", "/api/v1/groups/staff", { rules: [web, dns, { action: "allow", to: "198.51.100.0/24", proto: "tcp", ports: "22" }] });
    expect(broken.status).toBe(422);
    expect(broken.body.error.message).toContain("tests[2] fails: a member may not reach 198.51.100.10 tcp/22, but to 198.51.100.10 tcp/22: allowed by rule 3");
    const delWeb = await f.request("DELETE", "/api/v1/groups/staff/rules/1");
    expect(delWeb.status).toBe(422);
    expect((await f.request("GET", "/api/v1/groups/staff")).body.policy.rules).toEqual([web, dns]);
  });

  test("a user rule change that breaks a test naming the user is refused with the group and test", async () => {
    const f = apiFixture();
    await f.request("PUT", "/api/v1/users/alice", { rules: [ssh] });
    await f.request("PUT", "/api/v1/groups/staff", { rules: [web], tests });
    await f.request("PATCH", "/api/v1/users/alice", { groups: ["staff"] });
    const refused = await f.request("DELETE", "/api/v1/users/alice/rules/1");
    expect([refused.status, refused.body.error.code]).toEqual([422, "policy_test_failed"]);
    expect(refused.body.error.details).toEqual([{ group: "staff", path: "tests.0", message: expect.stringContaining("group staff tests[0] fails: alice may reach 198.51.100.22 tcp/22, but") }]);
    const deny = await f.request("POST", "/api/v1/users/alice/rules", { action: "deny", to: "198.51.100.0/24", proto: "any" });
    expect(deny.status).toBe(422);
    const put = await f.request("PUT", "/api/v1/users/alice", { groups: ["staff"] });
    expect(put.status).toBe(422);
    expect((await f.request("GET", "/api/v1/users/alice")).body.rules).toEqual([ssh]);
    // bob is named by no test: his rules are his business.
    await f.request("PUT", "/api/v1/users/bob", { groups: ["staff"] });
    expect((await f.request("POST", "/api/v1/users/bob/rules", { action: "deny", to: "198.51.100.0/24", proto: "any" })).status).toBe(201);
  });
});

describe("GET /api/v1/policy/trace", () => {
  test("names the deciding rule (the group's or the user's) or why nothing allowed it", async () => {
    const f = apiFixture();
    await f.request("PUT", "/api/v1/groups/staff", { routes: ["198.51.100.0/24"], restrictToRoutes: true, rules: [web, dns, { action: "allow", to: "0.0.0.0/0", proto: "icmp" }] });
    await f.request("PUT", "/api/v1/users/alice", { groups: ["staff"], rules: [ssh] });
    const q = (query: string) => f.request("GET", `/api/v1/policy/trace?${query}`, undefined, { token: f.reader });

    const byUser = await q("user=alice&to=198.51.100.22&proto=tcp&port=22");
    expect(byUser.status).toBe(200);
    expect(byUser.body).toEqual({ user: "alice", group: "staff", allowed: true, decidedBy: "rule", rule: { source: "user", index: 1, rule: ssh }, reason: "to 198.51.100.22 tcp/22: allowed by user rule 1 (allow tcp 198.51.100.22/32 port 22)" });
    const byGroup = await q("user=alice&to=198.51.100.53&proto=udp&port=53");
    expect(byGroup.body.rule).toEqual({ source: "group", index: 2, rule: dns });
    expect(byGroup.body.reason).toContain("allowed by group rule 2");

    const outside = await q("user=alice&to=192.0.2.1&proto=icmp");
    expect([outside.body.allowed, outside.body.decidedBy]).toEqual([false, "restrictToRoutes"]);
    const denied = await q("user=alice&to=198.51.100.10&proto=tcp&port=25");
    expect([denied.body.allowed, denied.body.decidedBy]).toEqual([false, "defaultDeny"]);
    expect(denied.body.rule).toBeUndefined();
  });

  test("without a group the gateway's defaults (the starter rule) apply; bad queries are refused with their path", async () => {
    const f = apiFixture();
    await f.request("PUT", "/api/v1/users/carol", {});
    const starter = await f.request("GET", "/api/v1/policy/trace?user=carol&to=192.0.2.1&proto=udp&port=53");
    expect(starter.body).toMatchObject({ group: "", allowed: true, decidedBy: "rule", rule: { source: "group", index: 1 } });
    // An IPv6 peer is judged by the IPv6 tables (the starter rule covers IPv6 too).
    const v6 = await f.request("GET", "/api/v1/policy/trace?user=carol&to=2001:db8::1&proto=tcp&port=443");
    expect(v6.status).toBe(200);
    expect(v6.body).toMatchObject({ allowed: true, decidedBy: "rule", reason: expect.stringContaining("to 2001:db8::1 tcp/443: allowed by rule 1") });
    const client = await f.request("GET", "/api/v1/policy/trace?user=carol&to=10.10.0.7&proto=icmp");
    expect([client.body.allowed, client.body.decidedBy]).toEqual([false, "clientToClient"]);
    expect(client.body.reason).toContain("pool 10.10.0.0/24");
    expect((await f.request("GET", "/api/v1/policy/trace?user=nobody&to=192.0.2.1")).body.error.code).toBe("user_not_found");
    const bad = await f.request("GET", "/api/v1/policy/trace?user=carol&to=192.0.2.300&proto=icmp&port=80");
    expect(bad.status).toBe(400);
    expect(paths(bad.body).sort()).toEqual(["port", "to"]);
    const notMember = await f.request("GET", "/api/v1/policy/trace?user=carol&to=192.0.2.1&group=staff");
    expect(paths(notMember.body)).toEqual(["group"]);
  });
});
