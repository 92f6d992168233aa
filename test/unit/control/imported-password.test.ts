import { describe, expect, test } from "bun:test";
import { unwrap } from "../../../src/errors.ts";
import { apiFixture } from "../api/fixture.ts";

const SHA512_PW = "$6$S$CH.Tlhu808mQDd2U8KdEhcn6RPUmKvFPPgR2H5yf9.5hKJlcAehZXMUO0Uv.0x1gWdsdDu7VEEjGIcpIjr3wh0"; // openssl passwd -6 -salt S PW

describe("passwords imported from ocpasswd", () => {
  test("the crypt hash verifies once and is replaced by the gateway hasher's (argon2id); the new hash verifies the same password", async () => {
    const { control } = apiFixture();
    await control.users.add({ name: "ä/b:c", groups: [] });
    expect(control.users.adoptPasswordHash("ä/b:c", SHA512_PW, "local-cli").ok).toBe(true);
    expect(unwrap(await control.users.verifyPassword("ä/b:c", "wrong"))).toBeUndefined();
    expect(control.store.getUser("ä/b:c")!.passwordHash).toBe(SHA512_PW);
    expect(unwrap(await control.users.verifyPassword("ä/b:c", "PW"))).toBeDefined();
    const after = control.store.getUser("ä/b:c")!.passwordHash;
    expect(after).not.toBe(SHA512_PW);
    expect(after.startsWith("fake$")).toBe(true); // the fixture's hasher stands in for argon2id
    expect(unwrap(await control.users.verifyPassword("ä/b:c", "PW"))).toBeDefined();
    expect(unwrap(await control.users.verifyPassword("ä/b:c", "wrong"))).toBeUndefined();
  });

  test("a locked entry is stored as it is and never verifies", async () => {
    const { control } = apiFixture();
    await control.users.add({ name: "locked", groups: [] });
    expect(control.users.adoptPasswordHash("locked", `!${SHA512_PW}`, "local-cli").ok).toBe(true);
    expect(unwrap(await control.users.verifyPassword("locked", "PW"))).toBeUndefined();
    expect(control.store.getUser("locked")!.passwordHash).toBe(`!${SHA512_PW}`);
  });

  test("anything but a crypt hash is refused and changes nothing", async () => {
    const { control } = apiFixture();
    await control.users.add({ name: "x", groups: [] });
    const r = control.users.adoptPasswordHash("x", "plaintext", "local-cli");
    expect(r.ok ? "" : r.error.code).toBe("invalid_input");
    expect(control.store.getUser("x")!.passwordHash).toBe("!");
  });
});
