import { describe, expect, test } from "bun:test";
import { uiFixture } from "./ui-fixture.ts";

/** A group form with two rules, two policy tests (one after a blank row) and a quota, as a browser sends it. */
const GROUP_FORM = {
  rulesMode: "explicit",
  "rules.0.action": "deny",
  "rules.0.direction": "outbound",
  "rules.0.to": "198.51.100.10/32",
  "rules.0.proto": "tcp",
  "rules.0.ports": "22",
  "rules.0.description": "",
  "rules.1.action": "allow",
  "rules.1.direction": "outbound",
  "rules.1.to": "198.51.100.0/24",
  "rules.1.proto": "any",
  "rules.1.ports": "",
  "rules.1.description": "",
  "tests.0.user": "",
  "tests.0.to": "198.51.100.10",
  "tests.0.proto": "tcp",
  "tests.0.port": "22",
  "tests.0.expect": "deny",
  // A blank row between: skipped, and the next row keeps its place for its problems.
  "tests.1.user": "",
  "tests.1.to": "",
  "tests.1.proto": "tcp",
  "tests.1.port": "",
  "tests.1.expect": "allow",
  "tests.2.user": "bob",
  "tests.2.to": "198.51.100.20",
  "tests.2.proto": "tcp",
  "tests.2.port": "443",
  "tests.2.expect": "allow",
  "quota.bytes": "50GB",
  "quota.period": "monthly",
  "quota.resetDay": "15",
  "quota.count": "tx",
  "quota.atLimit": "throttle",
  "quota.throttleRate": "1mbit",
};

async function admin() {
  const f = uiFixture();
  await f.api.control.groups.add("staff", {});
  await f.api.control.users.add({ name: "bob", groups: ["staff"] });
  const s = await f.signIn("alice", "admin");
  const post = (path: string, form: Record<string, string>) => f.request("POST", path, { cookie: s.cookie, form: { _csrf: s.csrf, ...form } });
  return { f, ...s, post };
}

const errorOf = (html: string, field: string) => new RegExp(`<span class="field-error" id="f-${field.replace(/\./g, "-")}-error" role="alert">([^<]*)</span>`).exec(html)?.[1];

describe("web UI group form: policy tests and quota", () => {
  test("tests and quota are saved through GroupService, audited, and shown back; blank removes them", async () => {
    const { f, cookie, post } = await admin();
    expect((await post("/ui/groups/staff", GROUP_FORM)).status).toBe(303);
    const saved = f.api.control.groups.get("staff");
    expect(saved.ok && saved.value.policy.tests).toEqual([
      { to: "198.51.100.10", proto: "tcp", port: 22, expect: "deny" },
      { user: "bob", to: "198.51.100.20", proto: "tcp", port: 443, expect: "allow" },
    ]);
    expect(saved.ok && saved.value.policy.quota).toEqual({ bytes: 50e9, period: "monthly", resetDay: 15, count: "tx", atLimit: "throttle", throttleRate: 1_000_000 });
    const entry = f.api.control.audit.list().at(-1);
    expect(entry).toMatchObject({ actor: "admin:alice", action: "group.update", target: "staff" });
    expect(JSON.stringify(entry)).toContain("throttleRate");

    const page = await f.request("GET", "/ui/groups/staff", { cookie });
    expect(page.text).toMatch(/name="tests\.1\.user" value="bob"/);
    expect(page.text).toMatch(/name="tests\.1\.port" value="443"/);
    expect(page.text).toMatch(/name="quota\.bytes" value="50GB"/);
    expect(page.text).toMatch(/<select id="f-quota-atLimit" name="quota\.atLimit"><option value="block">block<\/option><option value="throttle" selected="">/);

    // Blank amount and no test rows: both fields removed.
    expect((await post("/ui/groups/staff", { ...GROUP_FORM, "tests.0.to": "", "tests.0.port": "", "tests.2.to": "", "tests.2.port": "", "tests.2.user": "", "quota.bytes": "" })).status).toBe(303);
    const cleared = f.api.control.groups.get("staff");
    expect(cleared.ok && "tests" in cleared.value.policy).toBe(false);
    expect(cleared.ok && "quota" in cleared.value.policy).toBe(false);
  });

  test("a change whose policy test fails is refused, the failing assertion beside its row; nothing is saved", async () => {
    const { f, post } = await admin();
    expect((await post("/ui/groups/staff", GROUP_FORM)).status).toBe(303);
    const before = JSON.stringify(f.api.control.groups.get("staff"));
    // Dropping the deny rule breaks test 1 (198.51.100.10 tcp/22 expected denied).
    const refused = await post("/ui/groups/staff", { ...GROUP_FORM, "rules.0.to": "", "rules.0.ports": "" });
    expect(refused.status).toBe(200);
    expect(refused.text).toContain("Nothing was saved: 1 problem(s), shown next to the fields.");
    expect(errorOf(refused.text, "tests.0")).toMatch(/198\.51\.100\.10 tcp\/22.*allowed by rule 1/);
    expect(refused.text).not.toContain("f-tests-2-error");
    expect(JSON.stringify(f.api.control.groups.get("staff"))).toBe(before);
  });

  test("a bad test or quota value is shown next to its field, with what was typed", async () => {
    const { f, post } = await admin();
    const refused = await post("/ui/groups/staff", { ...GROUP_FORM, "tests.2.to": "198.51.100.999", "tests.0.port": "", "quota.atLimit": "throttle", "quota.throttleRate": "", "quota.period": "total", "quota.bytes": "lots" });
    expect(refused.status).toBe(200);
    // Row 3 as typed (the blank row 2 does not shift it), its address marked invalid.
    expect(refused.text).toMatch(/<input id="f-tests-2-to" name="tests\.2\.to" value="198\.51\.100\.999"[^>]*aria-invalid="true" aria-describedby="f-tests-2-to-error"/);
    expect(errorOf(refused.text, "tests.2.to")).toContain("is not an IPv4 or IPv6 address");
    expect(errorOf(refused.text, "tests.0.port")).toContain("a tcp assertion needs a port");
    expect(errorOf(refused.text, "quota.bytes")).toBeDefined();
    expect(refused.text).toMatch(/name="quota\.bytes" value="lots"/);
    expect(f.api.control.groups.get("staff")).toMatchObject({ ok: true, value: { policy: {} } });
    const stored = f.api.control.groups.get("staff");
    expect(stored.ok && stored.value.policy.quota).toBeUndefined();
  });

  test("a throttle without a rate and a reset day of a total quota are named at their fields", async () => {
    const { post } = await admin();
    const refused = await post("/ui/groups/staff", { ...GROUP_FORM, "quota.throttleRate": "", "quota.period": "total" });
    expect(errorOf(refused.text, "quota.throttleRate")).toContain("throttle needs a throttleRate");
    expect(errorOf(refused.text, "quota.resetDay")).toContain("a total quota has no reset day");
  });

  test("a read admin sees the tests and quota disabled, without spare rows", async () => {
    const f = uiFixture();
    await f.api.control.groups.add("staff", { tests: [{ to: "198.51.100.10", proto: "icmp", expect: "allow" }], quota: { bytes: 1e9, period: "total", count: "both", atLimit: "block" } });
    const { cookie } = await f.signIn("rita", "read");
    const page = await f.request("GET", "/ui/groups/staff", { cookie });
    expect(page.text).toContain('name="tests.0.to" value="198.51.100.10"');
    expect(page.text).not.toContain('name="tests.1.to"');
    expect(page.text).toContain('name="quota.bytes" value="1GB"');
    expect(page.text).toMatch(/<fieldset disabled="" class="plain">/);
  });
});

describe("web UI user form: the user's own quota", () => {
  const USER_FORM = { groups: "staff", "quota.bytes": "2GiB", "quota.period": "monthly", "quota.resetDay": "", "quota.count": "both", "quota.atLimit": "block", "quota.throttleRate": "" };

  test("saved through UserService, audited, shown back; blank removes it (the group's applies)", async () => {
    const { f, cookie, post } = await admin();
    expect((await post("/ui/users/bob/edit", USER_FORM)).status).toBe(303);
    const bob = f.api.control.users.get("bob");
    expect(bob.ok && bob.value.quota).toEqual({ bytes: 2 * 1024 ** 3, period: "monthly", count: "both", atLimit: "block" });
    expect(f.api.control.audit.list().at(-1)).toMatchObject({ actor: "admin:alice", target: "bob" });
    const page = await f.request("GET", "/ui/users/bob", { cookie });
    expect(page.text).toContain('name="quota.bytes" value="2GiB"');
    expect(page.text).toContain("Quota (user)");

    expect((await post("/ui/users/bob/edit", { ...USER_FORM, "quota.bytes": "" })).status).toBe(303);
    const cleared = f.api.control.users.get("bob");
    expect(cleared.ok && cleared.value.quota).toBeUndefined();
  });

  test("a bad quota value is shown next to its field; nothing is saved", async () => {
    const { f, post } = await admin();
    const refused = await post("/ui/users/bob/edit", { ...USER_FORM, "quota.resetDay": "40" });
    expect(refused.status).toBe(200);
    expect(errorOf(refused.text, "quota.resetDay")).toMatch(/31/);
    expect(refused.text).toMatch(/<input id="f-quota-resetDay" name="quota\.resetDay" value="40"[^>]*aria-invalid="true"/);
    const bob = f.api.control.users.get("bob");
    expect(bob.ok && bob.value.quota).toBeUndefined();
  });
});
