import { describe, expect, test } from "bun:test";
import { uiFixture } from "./ui-fixture.ts";

/** Every field the group page shows, as a browser sends it. */
const FULL_FORM = {
  routes: "198.51.100.0/24\n192.0.2.0/25",
  excludeRoutes: "198.51.100.128/25",
  dns: "198.51.100.53",
  splitDns: "corp.example\nlab.example",
  defaultDomain: "corp.example",
  mtu: "1400",
  dpdSeconds: "30",
  keepaliveSeconds: "20",
  mobileDpdSeconds: "300",
  idleTimeoutSeconds: "600",
  sessionTimeoutSeconds: "86400",
  auth: "password+otp",
  maxSessionsPerUser: "2",
  rulesMode: "explicit",
  "rules.0.action": "deny",
  "rules.0.direction": "outbound",
  "rules.0.to": "198.51.100.10/32",
  "rules.0.proto": "tcp",
  "rules.0.ports": "22",
  "rules.0.description": "no ssh",
  "rules.1.action": "allow",
  "rules.1.direction": "outbound",
  "rules.1.to": "198.51.100.0/24",
  "rules.1.proto": "any",
  "rules.1.ports": "",
  "rules.1.description": "",
  // A spare row left empty: ignored.
  "rules.2.action": "allow",
  "rules.2.direction": "outbound",
  "rules.2.to": "",
  "rules.2.proto": "any",
  "rules.2.ports": "",
  "rules.2.description": "",
  rateUp: "20mbit",
  rateDown: "100000000",
  restrictToRoutes: "true",
};

async function admin() {
  const f = uiFixture();
  await f.api.control.groups.add("staff", {});
  const s = await f.signIn("alice", "admin");
  const post = (path: string, form: Record<string, string>) => f.request("POST", path, { cookie: s.cookie, form: { _csrf: s.csrf, ...form } });
  return { f, ...s, post };
}

describe("web UI group form", () => {
  test("every policy field is saved through GroupService and audited under the admin's name", async () => {
    const { f, cookie, post } = await admin();
    const saved = await post("/ui/groups/staff", FULL_FORM);
    expect(saved.status).toBe(303);
    const policy = f.api.control.groups.get("staff");
    expect(policy.ok && policy.value.policy).toEqual({
      routes: ["198.51.100.0/24", "192.0.2.0/25"],
      excludeRoutes: ["198.51.100.128/25"],
      dns: ["198.51.100.53"],
      splitDns: ["corp.example", "lab.example"],
      defaultDomain: "corp.example",
      mtu: 1400,
      dpdSeconds: 30,
      keepaliveSeconds: 20,
      mobileDpdSeconds: 300,
      idleTimeoutSeconds: 600,
      sessionTimeoutSeconds: 86400,
      auth: "password+otp",
      maxSessionsPerUser: 2,
      rules: [
        { action: "deny", to: "198.51.100.10/32", proto: "tcp", ports: "22", description: "no ssh" },
        { action: "allow", to: "198.51.100.0/24", proto: "any" },
      ],
      rateUp: 20_000_000,
      rateDown: 100_000_000,
      restrictToRoutes: true,
      icmpProhibited: false,
    });
    expect(f.api.control.audit.list().at(-1)).toMatchObject({ actor: "admin:alice", action: "group.update", target: "staff" });
    const page = await f.request("GET", "/ui/groups/staff", { cookie });
    expect(page.text).toContain("Group staff saved");
    expect(page.text).toContain('value="198.51.100.10/32"');

    // Blank fields remove themselves (the defaults apply again); "starter" drops the rules field.
    const blank = Object.fromEntries(Object.keys(FULL_FORM).map((k) => [k, ""]));
    expect((await post("/ui/groups/staff", { ...blank, rulesMode: "starter", icmpProhibited: "true" })).status).toBe(303);
    const cleared = f.api.control.groups.get("staff");
    expect(cleared.ok && cleared.value.policy).toEqual({ routes: [], excludeRoutes: [], dns: [] });
  });

  test("a rule with a bad network is shown next to its field, with what was typed; nothing is saved", async () => {
    const { f, post } = await admin();
    const before = JSON.stringify(f.api.control.groups.get("staff"));
    const refused = await post("/ui/groups/staff", { ...FULL_FORM, "rules.1.to": "198.51.100.300/24", mtu: "big" });
    expect(refused.status).toBe(200);
    expect(refused.text).toContain("Nothing was saved: 2 problem(s)");
    // The input is marked invalid and points at the message right after it.
    expect(refused.text).toMatch(/<input id="f-rules-1-to" name="rules\.1\.to" value="198\.51\.100\.300\/24"[^>]*aria-invalid="true" aria-describedby="f-rules-1-to-error"/);
    expect(refused.text).toMatch(/<span class="field-error" id="f-rules-1-to-error" role="alert">[^<]*198\.51\.100\.300/);
    expect(refused.text).toMatch(/<span class="field-error" id="f-mtu-error" role="alert">[^<]*number/);
    // The valid rule row carries no error.
    expect(refused.text).not.toContain("f-rules-0-to-error");
    expect(JSON.stringify(f.api.control.groups.get("staff"))).toBe(before);
  });

  test("a problem in a rule row after a blank row is shown on the row the operator typed it in", async () => {
    const { post } = await admin();
    const refused = await post("/ui/groups/staff", { rulesMode: "explicit", "rules.0.to": "", "rules.1.action": "allow", "rules.1.to": "198.51.100.0/24", "rules.1.proto": "icmp", "rules.1.ports": "80" });
    expect(refused.text).toMatch(/id="f-rules-1-ports-error" role="alert">ports apply to tcp or udp only/);
  });

  test("the policy trace names the deciding rule of the saved policy", async () => {
    const { f, cookie, post } = await admin();
    await post("/ui/groups/staff", FULL_FORM);
    const denied = await f.request("GET", "/ui/groups/staff?to=198.51.100.10&proto=tcp&port=22", { cookie });
    expect(denied.text).toMatch(/id="trace-result"><strong>Denied<\/strong>: to 198\.51\.100\.10 tcp\/22: denied by rule 1 \(deny tcp 198\.51\.100\.10\/32 port 22 \(no ssh\)\)/);
    const allowed = await f.request("GET", "/ui/groups/staff?to=198.51.100.10&proto=tcp&port=443", { cookie });
    expect(allowed.text).toContain("<strong>Allowed</strong>: to 198.51.100.10 tcp/443: allowed by rule 2");
    const outside = await f.request("GET", "/ui/groups/staff?to=203.0.113.9&proto=udp&port=53", { cookie });
    expect(outside.text).toContain("<strong>Denied</strong>");
    const bad = await f.request("GET", "/ui/groups/staff?to=198.51.100.10&proto=tcp&port=99999", { cookie });
    expect(bad.text).toMatch(/id="trace-error">port: /);
  });

  test("the trace answers what GET /api/v1/policy/trace answers: a named user's own rules count, blank is a member without any; IPv6 too", async () => {
    const { f, cookie, post } = await admin();
    const control = f.api.control;
    await control.groups.add("lab", {});
    await post("/ui/groups/lab", { rulesMode: "explicit", "rules.0.action": "allow", "rules.0.to": "2001:db8:5::/48", "rules.0.proto": "tcp", "rules.0.ports": "443", "rules.1.action": "allow", "rules.1.to": "198.51.100.0/24", "rules.1.proto": "icmp" });
    await control.users.add({ name: "bob", groups: ["lab"] });
    await control.users.add({ name: "carol", groups: ["staff"] });
    expect((await control.rules.addToUser("bob", { action: "allow", to: "2001:db8:6::/48", proto: "icmp" }, "local-cli")).ok).toBe(true);
    const result = async (query: string) => /id="trace-(?:result|error)"[^>]*>(.*?)<\/p>/s.exec((await f.request("GET", `/ui/groups/lab?${query}`, { cookie })).text)?.[1]?.replace(/<\/?strong>/g, "");
    const api = async (query: string) => (await f.api.request("GET", `/api/v1/policy/trace?${query}`, undefined, { token: f.api.reader })).body;

    // A member without rules of their own: the group's alone.
    expect(await result("to=2001:db8:5::10&proto=tcp&port=443")).toBe("Allowed: to 2001:db8:5::10 tcp/443: allowed by rule 1 (allow tcp 2001:db8:5::/48 port 443) (a member in group lab)");
    expect(await result("user=&to=2001:db8:6::1&proto=icmp")).toStartWith("Denied: to 2001:db8:6::1 icmpv6: denied: no allow rule matches (default deny");
    // bob's own rule decides for bob, named as the API names it.
    const bobs = await api("user=bob&to=2001:db8:6::1&proto=icmp");
    expect(bobs).toMatchObject({ allowed: true, decidedBy: "rule", rule: { source: "user", index: 1 } });
    expect(await result("user=bob&to=2001:db8:6::1&proto=icmp")).toBe(`Allowed: ${bobs.reason} (user bob in group lab)`);
    expect(await result("user=bob&to=198.51.100.7&proto=icmp")).toBe(`Allowed: ${(await api("user=bob&to=198.51.100.7&proto=icmp")).reason} (user bob in group lab)`);
    // The API's refusals, in words: an unknown user, a user of another group, a bad address.
    expect(await result("user=nobody&to=198.51.100.7")).toContain("no user named nobody");
    expect(await result("user=carol&to=198.51.100.7")).toContain("user carol is not a member of group lab");
    expect(await result("to=198.51.100.300")).toContain("to: ");
  });

  test("the user page asks the same question for that user, in any of their groups", async () => {
    const { f, cookie, post } = await admin();
    const control = f.api.control;
    await post("/ui/groups/staff", FULL_FORM);
    await control.groups.add("lab", { rules: [] });
    await control.users.add({ name: "bob", groups: ["lab", "staff"] });
    expect((await control.rules.addToUser("bob", { action: "allow", to: "2001:db8:6::/48", proto: "icmp" }, "local-cli")).ok).toBe(true);
    const page = await f.request("GET", "/ui/users/bob", { cookie });
    expect(page.text).toContain('id="trace-title"');
    expect(page.text).not.toContain('id="t-user"');
    const inLab = await f.request("GET", "/ui/users/bob?to=2001:db8:6::1&proto=icmp", { cookie });
    expect(inLab.text).toContain("allowed by user rule 1");
    expect(inLab.text).toContain("(user bob in group lab)");
    const inStaff = await f.request("GET", "/ui/users/bob?group=staff&to=198.51.100.10&proto=tcp&port=22", { cookie });
    expect(inStaff.text).toContain("denied by group rule 1");
    expect(inStaff.text).toContain("(user bob in group staff)");
  });

  test("create and delete a group; a read admin sees the form disabled, no buttons, and is refused", async () => {
    const { f, post } = await admin();
    expect((await post("/ui/groups", { name: "lab" })).status).toBe(303);
    expect(f.api.control.groups.get("lab").ok).toBe(true);
    const dup = await post("/ui/groups", { name: "lab" });
    expect(dup.text).toContain("group lab already exists");
    expect((await post("/ui/groups/lab/delete", {})).status).toBe(303);
    expect(f.api.control.groups.get("lab").ok).toBe(false);

    const reader = await f.signIn("rita", "read");
    const page = await f.request("GET", "/ui/groups/staff", { cookie: reader.cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain('<fieldset disabled="" class="plain">');
    for (const button of ["Save group", "Delete group", "Create group"]) expect(page.text).not.toContain(button);
    expect((await f.request("GET", "/ui/groups", { cookie: reader.cookie })).text).not.toContain("Create group");
    // The trace is a question, not a change: read accounts may ask it.
    expect((await f.request("GET", "/ui/groups/staff?to=198.51.100.1&proto=icmp&port=", { cookie: reader.cookie })).text).toContain('id="trace-result"');
    const forged = await f.request("POST", "/ui/groups/staff", { cookie: reader.cookie, form: { _csrf: reader.csrf, ...FULL_FORM } });
    expect(forged.status).toBe(403);
    const policy = f.api.control.groups.get("staff");
    expect(policy.ok && policy.value.policy.mtu).toBeUndefined();
  });
});
