import { describe, expect, test } from "bun:test";
import { uiFixture } from "./ui-fixture.ts";

/** The message shown right after a field (its id is the field's id plus "-error"), and whether the field points at it. */
function beside(html: string, fieldId: string): { message: string | undefined; invalid: boolean } {
  const message = new RegExp(`id="${fieldId}-error" role="alert">([^<]*)<`).exec(html)?.[1];
  const invalid = new RegExp(`id="${fieldId}"[^>]*aria-invalid="true" aria-describedby="${fieldId}-error"`).test(html);
  return { message, invalid };
}

describe("every refused UI form answers alike: 200, the form again with what was typed, the problem next to its field", () => {
  test("users, user edit, admins, tokens, groups, settings", async () => {
    const f = uiFixture();
    const control = f.api.control;
    await control.groups.add("staff", {});
    await control.users.add({ name: "bob", groups: ["staff"] });
    const { cookie, csrf } = await f.signIn("alice", "admin");
    const post = (path: string, form: Record<string, string>) => f.request("POST", path, { cookie, form: { _csrf: csrf, ...form } });

    const cases: [string, Record<string, string>, string, RegExp, string?][] = [
      ["/ui/users", { name: `bad${"x".repeat(300)}`, password: "pw pw pw pw", groups: "staff" }, "f-name", /at most/, `value="bad${"x".repeat(300)}"`],
      ["/ui/users", { name: "bob", groups: "staff" }, "f-name", /already exists/],
      ["/ui/users", { name: "carol", groups: "staff, nosuch" }, "f-groups", /no group named nosuch/, 'value="staff, nosuch"'],
      ["/ui/users/bob/edit", { groups: "nosuch", routes: "" }, "f-groups", /entry 1: no group named nosuch/, ">nosuch</textarea>"],
      ["/ui/users/bob/edit", { groups: "staff", routes: "198.51.100.0/33" }, "f-routes", /33|prefix|network/i, ">198.51.100.0/33</textarea>"],
      ["/ui/users/bob/edit", { groups: "staff", mtu: "99", "rules.0.action": "allow", "rules.0.to": "198.51.100.0/24", "rules.0.proto": "icmp", "rules.0.ports": "80" }, "f-rules-0-ports", /ports apply to tcp or udp only/, 'value="99"'],
      ["/ui/admins", { name: "rita", role: "read", password: "short" }, "f-password", /at least 8 characters/, 'value="rita"'],
      ["/ui/admins", { name: "alice", role: "read", password: "long enough" }, "f-name", /already exists/],
      ["/ui/tokens", { name: "ci", scope: "root", days: "" }, "f-scope", /./, 'value="ci"'],
      ["/ui/tokens", { name: "ci", scope: "read", days: "soon" }, "f-days", /./, 'value="soon"'],
      ["/ui/groups/staff", { mtu: "70000", rulesMode: "starter" }, "f-mtu", /9000/, 'value="70000"'],
      ["/ui/settings", { mtu: "70000" }, "s-mtu", /9000/, 'value="70000"'],
    ];
    for (const [path, form, field, message, typed] of cases) {
      const res = await post(path, form);
      const what = `${path} ${JSON.stringify(form)}`;
      expect(res.status, what).toBe(200);
      const found = beside(res.text, field);
      expect(found.message, what).toMatch(message);
      expect(found.invalid, what).toBe(true);
      expect(res.text, what).toContain("Nothing was saved");
      if (typed) expect(res.text, what).toContain(typed);
    }
    // Nothing of it was stored.
    expect(control.users.list().map((u) => u.name)).toEqual(["bob"]);
    expect(control.users.get("bob")).toMatchObject({ ok: true, value: { groups: ["staff"], routes: [] } });
    expect(control.admins.list().map((a) => a.name)).toEqual(["alice"]);
    expect(control.tokens.list().some((t) => t.name === "ci")).toBe(false);
  });

  test("a problem of no field the form shows (a group's policy test a user's change breaks) is in the summary, with its path", async () => {
    const f = uiFixture();
    const control = f.api.control;
    await control.groups.add("staff", { tests: [{ user: "bob", to: "198.51.100.10", proto: "tcp", port: 22, expect: "allow" }] });
    await control.users.add({ name: "bob", groups: ["staff"] });
    const { cookie, csrf } = await f.signIn("alice", "admin");
    const rule = { "rules.0.action": "deny", "rules.0.direction": "outbound", "rules.0.to": "198.51.100.10/32", "rules.0.proto": "tcp", "rules.0.ports": "22", "rules.0.description": "" };
    const user = await f.request("POST", "/ui/users/bob/edit", { cookie, form: { _csrf: csrf, groups: "staff", ...rule } });
    expect(user.status).toBe(200);
    expect(user.text).toMatch(/class="notice error" role="alert">Nothing was saved: 1 problem\(s\)\. tests\.0: group staff /);
    const bob = control.users.get("bob");
    expect(bob.ok && bob.value.rules).toBeUndefined();
  });

  test("a refused action on a row (a user gone meanwhile) is a notice on the page, also with 200", async () => {
    const f = uiFixture();
    const { cookie, csrf } = await f.signIn("alice", "admin");
    for (const path of ["/ui/users/ghost/disabled", "/ui/users/ghost/password", "/ui/users/ghost/delete", "/ui/users/ghost/otp", "/ui/admins/ghost/role", "/ui/tokens/ghost/revoke"]) {
      const res = await f.request("POST", path, { cookie, form: { _csrf: csrf, disabled: "true", password: "a password", role: "read" } });
      expect(res.status, path).toBe(200);
      expect(res.text, path).toMatch(/class="notice error" role="alert">[^<]*ghost/);
    }
  });
});
