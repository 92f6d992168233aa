/**
 * The CLI's human output never writes a control character from the data raw (issue 8, item 4).
 * User names are validated when created through gw, so the hostile user here is written into the
 * store directly, as another tool, an old version or a hand edit could; names typed at login (and
 * so bans, events and error messages) are the realistic carriers. --json keeps the raw value.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";
import { gwCli } from "../harness/gateway.ts";

const dir = mkdtempSync(join(tmpdir(), "gw-cli-hostile-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const gw = (args: string[], input?: string) => gwCli("sources", [...args, "--data-dir", dir], input);
gw(["init"]);

const HOSTILE = "eve\x1b[2J\x1b]0;pwned\x07\n2000-01-01 forged\x9b31m\u2028\\x1b";
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/; // any but the newline that ends a line

describe("gw CLI human output with control characters in the data", () => {
  test("gw user list shows the name escaped, on its own row; --json keeps the raw name", () => {
    expect(gw(["user", "add", "alice"]).code).toBe(0);
    const store = openSqliteStore(join(dir, "gw.db"));
    if (!store.ok) throw store.error;
    store.value.insertUser({ name: HOSTILE, passwordHash: "", disabled: false, groups: [], failedLogins: 2, lastLoginAt: null, createdAt: Date.now(), overridesJson: "{}" });
    store.value.close();

    const list = gw(["user", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).not.toMatch(RAW_CONTROL);
    const rows = list.stdout.trimEnd().split("\n");
    expect(rows.length).toBe(3); // header, alice, eve: the newline in the name made no row of its own
    const eve = rows.find((r) => r.startsWith("eve"));
    expect(eve).toStartWith("eve\\x1b[2J\\x1b]0;pwned\\x07\\x0a2000-01-01 forged\\x9b31m\\u{2028}\\\\x1b ");
    expect(eve).toMatch(/ 2 +-$/);

    const json = gw(["user", "list", "--json"]);
    expect(json.stdout).not.toMatch(RAW_CONTROL);
    expect((JSON.parse(json.stdout) as { name: string }[]).map((u) => u.name).sort()).toEqual(["alice", HOSTILE].sort());
  });

  test("an error that quotes the name comes back on one line, escaped", () => {
    const r = gw(["user", "del", "mallory\n\x1b[2Jforged"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("gw: user_not_found: no user named mallory\\x0a\\x1b[2Jforged: 'gw user list' shows the users\n");
  });
});
