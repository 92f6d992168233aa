import { describe, expect, test } from "bun:test";
import { apiFixture } from "../api/fixture.ts";

describe("status counts and the user list (one query each, not one per user)", () => {
  test("status counts users and groups; listUsers keeps each user's groups in their order", async () => {
    const { control } = apiFixture();
    expect(control.status()).toMatchObject({ users: 0, groups: 0 });
    for (const g of ["ops", "staff", "lab"]) await control.groups.add(g, {});
    await control.users.add({ name: "bob", groups: ["staff", "ops"] });
    await control.users.add({ name: "amy", groups: ["lab", "staff", "ops"] });
    await control.users.add({ name: "cy", groups: [] });
    expect(control.status()).toMatchObject({ users: 3, groups: 3 });
    expect(control.store.listUsers().map((u) => [u.name, u.groups])).toEqual([
      ["amy", ["lab", "staff", "ops"]],
      ["bob", ["staff", "ops"]],
      ["cy", []],
    ]);
    // The single-user read gives the same answer.
    expect(control.store.getUser("amy")!.groups).toEqual(["lab", "staff", "ops"]);
    control.users.remove("cy");
    expect(control.status().users).toBe(2);
  });
});
