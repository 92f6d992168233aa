import { describe, expect, test } from "bun:test";
import { describeFirstAdmin, ensureFirstAdmin } from "../../../src/control/first-admin.ts";
import { apiFixture } from "../api/fixture.ts";

const IP = "198.51.100.7";

describe("the first admin account", () => {
  test("a data directory without admins gets `admin` with a random password that signs in; the next start adds nothing", async () => {
    const { control } = apiFixture();
    const first = await ensureFirstAdmin(control.admins);
    expect(first?.name).toBe("admin");
    expect(first!.password.length).toBeGreaterThanOrEqual(20);
    expect(control.admins.list().map((a) => [a.name, a.role])).toEqual([["admin", "admin"]]);
    const signedIn = await control.admins.signIn({ name: "admin", password: first!.password, ip: IP });
    expect(signedIn.ok).toBe(true);
    expect(control.audit.list().map((e) => `${e.actor} ${e.action} ${e.target}`)).toContain("gw-serve admin.create admin");
    expect(JSON.stringify(control.audit.list())).not.toContain(first!.password);

    expect(await ensureFirstAdmin(control.admins)).toBeUndefined();
    expect(control.admins.list()).toHaveLength(1);
  });

  test("two fresh directories get different passwords", async () => {
    const a = await ensureFirstAdmin(apiFixture().control.admins);
    const b = await ensureFirstAdmin(apiFixture().control.admins);
    expect(a!.password).not.toBe(b!.password);
  });

  test("an admin added before the first start (gw admin add) means none is created", async () => {
    const { control } = apiFixture();
    await control.admins.add({ name: "olga", role: "read", password: "olga-pass-123" }, "local-cli");
    expect(await ensureFirstAdmin(control.admins)).toBeUndefined();
    expect(control.admins.list().map((a) => a.name)).toEqual(["olga"]);
  });

  test("the printed line names the account, the password, where to sign in and how to change it", () => {
    const line = describeFirstAdmin({ name: "admin", password: "s3cret-once" }, "https://127.0.0.1:8443/ui");
    expect(line).not.toContain("\n");
    for (const part of ["admin", "s3cret-once", "https://127.0.0.1:8443/ui", "gw admin passwd admin", "shown once"]) expect(line).toContain(part);
  });
});
