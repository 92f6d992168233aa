import { describe, expect, test } from "bun:test";
import { uiFixture } from "./ui-fixture.ts";

/** Every field of the user page's form, as a browser sends it. */
const FULL_FORM = {
  groups: "staff\nlab",
  routes: "198.51.100.0/25",
  excludeRoutes: "198.51.100.64/26",
  dns: "198.51.100.53, 2001:db8::53",
  splitDns: "corp.example",
  staticAddress: "10.10.0.77",
  mtu: "1300",
  dpdSeconds: "40",
  keepaliveSeconds: "25",
  idleTimeoutSeconds: "900",
  sessionTimeoutSeconds: "3600",
  maxSessionsPerUser: "1",
  expiresAt: "2099-01-31",
  rateUp: "5mbit",
  rateDown: "10000000",
  "rules.0.action": "allow",
  "rules.0.direction": "outbound",
  "rules.0.to": "198.51.100.22/32",
  "rules.0.proto": "tcp",
  "rules.0.ports": "22",
  "rules.0.description": "ssh to the jump host",
  // A spare row left empty: ignored.
  "rules.1.action": "allow",
  "rules.1.direction": "outbound",
  "rules.1.to": "",
  "rules.1.proto": "any",
  "rules.1.ports": "",
  "rules.1.description": "",
};

describe("web UI user form: groups and every override", () => {
  test("saved through UserService (the API's validation), shown back, and blank fields remove themselves", async () => {
    const f = uiFixture();
    const control = f.api.control;
    await control.groups.add("staff", {});
    await control.groups.add("lab", {});
    await control.users.add({ name: "bob", groups: [] });
    const { cookie, csrf } = await f.signIn("alice", "admin");
    const post = (form: Record<string, string>) => f.request("POST", "/ui/users/bob/edit", { cookie, form: { _csrf: csrf, ...form } });

    expect((await post(FULL_FORM)).status).toBe(303);
    const user = control.users.get("bob");
    expect(user.ok && user.value).toMatchObject({
      groups: ["staff", "lab"],
      routes: ["198.51.100.0/25"],
      excludeRoutes: ["198.51.100.64/26"],
      dns: ["198.51.100.53", "2001:db8::53"],
      splitDns: ["corp.example"],
      staticAddress: "10.10.0.77",
      mtu: 1300,
      dpdSeconds: 40,
      keepaliveSeconds: 25,
      idleTimeoutSeconds: 900,
      sessionTimeoutSeconds: 3600,
      maxSessionsPerUser: 1,
      rateUp: 5_000_000,
      rateDown: 10_000_000,
      rules: [{ action: "allow", to: "198.51.100.22/32", proto: "tcp", ports: "22", description: "ssh to the jump host" }],
    });
    expect(user.ok && user.value.expiresAt).toStartWith("2099-01-31");
    expect(control.audit.list().at(-1)).toMatchObject({ actor: "admin:alice", action: "user.update", target: "bob" });

    // The page shows what is stored: the rule row and each field.
    const page = (await f.request("GET", "/ui/users/bob", { cookie })).text;
    expect(page).toContain('id="f-rules-0-to" name="rules.0.to" value="198.51.100.22/32"');
    expect(page).toContain('id="f-mtu" name="mtu" value="1300"');
    expect(page).toContain(">198.51.100.53\n2001:db8::53</textarea>");

    // Everything blank but the groups: the group's values apply again.
    expect((await post({ groups: "staff" })).status).toBe(303);
    const cleared = control.users.get("bob");
    expect(cleared.ok && cleared.value).toMatchObject({ groups: ["staff"], routes: [] });
    for (const field of ["excludeRoutes", "dns", "splitDns", "staticAddress", "mtu", "dpdSeconds", "rateUp", "rateDown", "rules", "expiresAt"] as const) {
      expect(cleared.ok && cleared.value[field], field).toBeUndefined();
    }
  });

  test("a read admin sees the form disabled, without a button", async () => {
    const f = uiFixture();
    await f.api.control.users.add({ name: "bob", groups: [] });
    const reader = await f.signIn("rita", "read");
    const page = (await f.request("GET", "/ui/users/bob", { cookie: reader.cookie })).text;
    expect(page).toContain('<fieldset disabled="" class="plain">');
    expect(page).not.toContain("Save user");
  });
});
