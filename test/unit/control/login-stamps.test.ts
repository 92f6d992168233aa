import { describe, expect, test } from "bun:test";
import { ControlPlane } from "../../../src/control/control-plane.ts";
import { SessionRegistry } from "../../../src/control/sessions.ts";
import { openSqliteStore } from "../../../src/store/sqlite-store.ts";
import { fakeHasher } from "../api/fixture.ts";

async function fixture() {
  const opened = openSqliteStore(":memory:");
  if (!opened.ok) throw opened.error;
  const store = opened.value;
  let now = 1_000;
  const control = new ControlPlane({ store, hasher: fakeHasher, sessions: new SessionRegistry(60_000, () => now), now: () => now });
  for (const name of ["alice", "bob"]) await control.users.add({ name, password: "pw", groups: [] });
  let transactions = 0;
  let refuse = false;
  const transaction = store.transaction.bind(store);
  store.transaction = (fn) => {
    transactions++;
    if (refuse) throw new Error("database or disk is full");
    return transaction(fn);
  };
  return { store, users: control.users, at: (t: number) => (now = t), transactions: () => transactions, refuse: (on: boolean) => (refuse = on) };
}

describe("login times", () => {
  test("a login's time waits for the next flush, and the logins of that moment are written in one transaction", async () => {
    const f = await fixture();
    f.at(5_000);
    f.users.recordSuccess("alice");
    f.at(6_000);
    f.users.recordSuccess("bob");
    f.users.recordSuccess("alice");
    expect([f.store.getUser("alice")?.lastLoginAt, f.store.getUser("bob")?.lastLoginAt]).toEqual([null, null]);
    f.users.flushLoginStamps();
    expect([f.store.getUser("alice")?.lastLoginAt, f.store.getUser("bob")?.lastLoginAt]).toEqual([6_000, 6_000]);
    expect(f.transactions()).toBe(1);
    f.users.flushLoginStamps(); // nothing pending: no write
    expect(f.transactions()).toBe(1);
  });

  test("a store that refuses the write: the error says so, the times are kept and written at the next flush", async () => {
    const f = await fixture();
    f.at(9_000);
    f.users.recordSuccess("alice");
    f.refuse(true);
    const failed = f.users.flushLoginStamps();
    expect(!failed.ok && failed.error.code).toBe("store_unavailable");
    expect(!failed.ok && failed.error.message).toContain("database or disk is full");
    f.refuse(false);
    expect(f.users.flushLoginStamps().ok).toBe(true);
    expect(f.store.getUser("alice")?.lastLoginAt).toBe(9_000);
  });

  test("reading users through the service shows the latest login at once", async () => {
    const f = await fixture();
    f.at(7_000);
    f.users.recordSuccess("alice");
    const alice = f.users.get("alice");
    expect(alice.ok && alice.value.lastLoginAt).toBe(7_000);
    f.at(8_000);
    f.users.recordSuccess("bob");
    expect(f.users.list().map((u) => [u.name, u.lastLoginAt])).toEqual([["alice", 7_000], ["bob", 8_000]]);
  });
});
