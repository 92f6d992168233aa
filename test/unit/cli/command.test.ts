import { afterAll, describe, expect, test } from "bun:test";
import { runCommand } from "citty";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UsageError } from "../../../src/cli/args.ts";
import { command } from "../../../src/cli/command.ts";
import type { Terminal } from "../../../src/cli/terminal.ts";
import { GwError } from "../../../src/errors.ts";
import { openSqliteStore } from "../../../src/store/sqlite-store.ts";

/** A terminal that keeps what a command printed. */
function recording(): Terminal & { out_: string[]; notes: string[] } {
  const t = { out_: [] as string[], notes: [] as string[], out: (l: string) => t.out_.push(l), note: (l: string) => t.notes.push(l) };
  return t;
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "gw-cli-command-"));
  dirs.push(d);
  return d;
};

describe("the command scaffold", () => {
  const echo = (terminal: Terminal) =>
    command(
      {
        name: "echo",
        description: "test",
        reach: "none",
        options: {
          name: { type: "positional", required: true, description: "a name" },
          tag: { type: "string", repeatable: true, description: "repeatable" },
          "no-tags": { type: "boolean", description: "a flag spelled no-" },
        },
        json: "JSON output",
        run: ({ options }) => ({
          data: options,
          view: { table: [{ name: options.name, tags: options.tag.join(",") }], columns: ["name", "tags"] },
          heading: ["before"],
          notes: [`after${options["no-tags"] ? " (no tags)" : ""}`],
        }),
      },
      terminal,
    );

  test("options arrive parsed: the positional, every value of a repeated option, a no- flag as written", async () => {
    const t = recording();
    await runCommand(echo(t), { rawArgs: ["alice", "--tag", "a", "--tag=b", "--no-tags", "--json"] });
    expect(JSON.parse(t.out_.join("\n"))).toEqual({ name: "alice", tag: ["a", "b"], "no-tags": true });
    expect(t.notes).toEqual([]);
  });

  test("without --json: the view on stdout between its heading and notes on stderr", async () => {
    const t = recording();
    await runCommand(echo(t), { rawArgs: ["bob"] });
    expect(t.out_).toEqual(["NAME  TAGS", "bob"]);
    expect(t.notes).toEqual(["before", "after"]);
  });

  test("an unknown option, or a repeated one without its value, is a usage error before run", async () => {
    const t = recording();
    await expect(runCommand(echo(t), { rawArgs: ["bob", "--colour", "red"] })).rejects.toThrow(UsageError);
    await expect(runCommand(echo(t), { rawArgs: ["bob", "--tag"] })).rejects.toThrow("--tag needs a value");
    expect(t.out_).toEqual([]);
  });

  test("a failure is printed first, then thrown", async () => {
    const t = recording();
    const check = command(
      { name: "check", description: "test", reach: "none", options: {}, json: "JSON", run: () => ({ data: ["x"], view: { lines: ["fail x"] }, failure: new GwError("check_failed", "1 failed") }) },
      t,
    );
    await expect(runCommand(check, { rawArgs: [] })).rejects.toThrow("1 failed");
    expect(t.out_).toEqual(["fail x"]);
  });

  test("reach api: the transport is chosen on the first call, so input is checked before any store or server", async () => {
    const missing = join(tempDir(), "nothing-here");
    const picky = command(
      {
        name: "picky",
        description: "test",
        reach: "api",
        options: { scope: { type: "string", description: "admin or read" } },
        async run({ options, gw }) {
          if (options.scope !== "read") throw new UsageError("--scope must be read");
          return { data: await gw.call("GET", "/api/v1/users") };
        },
      },
      recording(),
    );
    await expect(runCommand(picky, { rawArgs: ["--scope", "x", "--data-dir", missing] })).rejects.toThrow(UsageError);
    const refused = await runCommand(picky, { rawArgs: ["--scope", "read", "--data-dir", missing] }).catch((e) => e);
    expect(refused).toBeInstanceOf(GwError);
    expect(refused.code).toBe("no_data_dir");
  });

  test("reach api on a data directory without a server: the local store, closed after the command", async () => {
    const dir = tempDir();
    const store = openSqliteStore(join(dir, "gw.db"));
    if (!store.ok) throw store.error;
    store.value.close();
    const t = recording();
    const users = command({ name: "users", description: "test", reach: "api", options: {}, json: "JSON", run: async ({ gw }) => ({ data: await gw.call("GET", "/api/v1/users") }) }, t);
    await runCommand(users, { rawArgs: ["--data-dir", dir, "--json"] });
    expect(JSON.parse(t.out_.join("\n"))).toEqual([]);
  });

  test("reach data-dir: --data-dir, absolute, whether or not it exists", async () => {
    let seen = "";
    const where = command({ name: "where", description: "test", reach: "data-dir", options: {}, run: ({ gw }) => void (seen = gw.dataDir) }, recording());
    await runCommand(where, { rawArgs: ["--data-dir", "relative/dir"] });
    expect(seen).toBe(join(process.cwd(), "relative/dir"));
  });
});
