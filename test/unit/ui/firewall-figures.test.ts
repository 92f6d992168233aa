import { describe, expect, test } from "bun:test";
import { uiFixture } from "./ui-fixture.ts";

describe("the firewall in the web UI", () => {
  test("the dashboard lists policy drops by group and deciding rule, in words", async () => {
    const f = uiFixture();
    const drops = f.api.control.runtime!.drops;
    for (let i = 0; i < 4; i++) drops.count("policy_denied");
    const staff = drops.ruleCounts("staff");
    staff.set(1, 3);
    staff.set("no_allow", 1);
    drops.ruleCounts("lab").set("user_rule", 2);
    const { cookie } = await f.signIn("alice", "admin");
    const page = await f.request("GET", "/ui", { cookie });
    expect(page.text).toMatch(/Dropped packets by reason<\/div><ul class="drops"><li>policy_denied: 4<\/li>/);
    expect(page.text).toContain('Policy drops by group and rule</div><ul class="drops"><li>staff rule 2: 3</li><li>lab a user&#39;s own rule: 2</li><li>staff no allow rule: 1</li></ul>');
  });

  test("a session's policy drops and effective rate limits show in the connections table and on the user page, and sort", async () => {
    const f = uiFixture();
    const control = f.api.control;
    await control.users.add({ name: "bob", groups: [] });
    const limited = f.api.connect("bob", "staff");
    f.api.connect("carol", "staff");
    control.sessions.findById(limited.id)!.firewall = { drops: () => ({ policy_denied: 3, rate_limited_up: 2 }), dropTotal: () => 5, rateUp: 20_000_000, rateDown: undefined };
    const { cookie } = await f.signIn("alice", "admin");
    const rowOf = (html: string, user: string) => new RegExp(`<tr data-session="[^"]+"><td>(?:<a[^>]*>)?${user}<.*?</tr>`).exec(html)?.[0] ?? "";

    const table = await f.request("GET", "/ui/connections?sort=drops", { cookie });
    expect(rowOf(table.text, "bob")).toContain('<td class="num rate">— (limit 20 Mbit/s / none)</td><td class="num drops-cell">5: policy_denied 3, rate_limited_up 2</td>');
    expect(rowOf(table.text, "carol")).toContain('<td class="num rate">—</td><td class="num drops-cell">0</td>');
    // Most drops first by default.
    expect(table.text.indexOf(">bob<")).toBeLessThan(table.text.indexOf(">carol<"));
    expect(table.text).toContain('aria-sort="descending"><a href="/ui/connections?q=&amp;sort=drops&amp;dir=asc">Dropped by policy ↓</a>');

    const user = await f.request("GET", "/ui/users/bob", { cookie });
    expect(rowOf(user.text, "bob")).toContain("5: policy_denied 3, rate_limited_up 2");
  });
});
