import { describe, expect, test } from "bun:test";
import { main } from "../../../src/cli/main.ts";
import type { Terminal } from "../../../src/cli/terminal.ts";
import { commandList } from "../../../src/cli/usage.ts";
import { userCommand } from "../../../src/cli/user-commands.ts";

async function gw(argv: string[]): Promise<{ code: number; out: string[]; notes: string[] }> {
  const out: string[] = [];
  const notes: string[] = [];
  const terminal: Terminal = { out: (l) => out.push(l), note: (l) => notes.push(l) };
  return { code: await main(argv, terminal), out, notes };
}

describe("gw help, gw <group> and unknown commands list the same commands", () => {
  const list = commandList(userCommand);

  test("the list names every user command with its description", () => {
    expect(list.map((l) => l.trim().split(/\s+/)[0])).toEqual(["add", "list", "show", "set", "passwd", "disable", "enable", "del", "otp", "usage", "rule"]);
    expect(list[0]).toMatch(/^ {2}add {6}Add a user/);
  });

  test("gw help user and gw user --help: the list on stdout, exit 0", async () => {
    for (const argv of [["help", "user"], ["user", "--help"], ["user", "-h"]]) {
      const r = await gw(argv);
      expect({ argv, code: r.code }).toEqual({ argv, code: 0 });
      expect(r.out.join("\n")).toContain(list.join("\n"));
    }
  });

  test("gw user with no command, an unknown one, or an option before the command: a usage error with the list on stderr, exit 2", async () => {
    const none = await gw(["user"]);
    expect(none.code).toBe(2);
    expect(none.notes).toEqual(["gw: usage: gw user needs a command; its commands:", ...list]);
    const unknown = await gw(["user", "frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.notes).toEqual(['gw: usage: gw user has no command "frobnicate"; its commands:', ...list]);
    const option = await gw(["--json", "user", "list"]);
    expect(option.code).toBe(2);
    expect(option.notes[0]).toBe("gw: usage: --json goes after the command, e.g. gw <command> --json; its commands:");
  });

  test("gw alone and gw help: the top-level list; gw help on an unknown command is a usage error", async () => {
    const top = await gw([]);
    expect(top.code).toBe(2);
    expect(top.notes.slice(1).map((l) => l.trim().split(/\s+/)[0])).toContain("user");
    const help = await gw(["help"]);
    expect(help.code).toBe(0);
    expect(help.out.join("\n")).toContain(top.notes.slice(1).join("\n"));
    expect((await gw(["help", "nope"])).code).toBe(2);
  });

  test("help for one command shows its options under its full name", async () => {
    const r = await gw(["help", "user", "add"]);
    expect(r.code).toBe(0);
    expect(r.out.join("\n")).toContain("gw user add");
    expect(r.out.join("\n")).toContain("--password-stdin");
  });
});

describe("the worker processes' command is hidden", () => {
  test("gw --help and gw help do not list __worker; the command itself is there", async () => {
    for (const argv of [["--help"], ["help"]]) {
      const r = await gw(argv);
      expect(r.code).toBe(0);
      expect(r.out.join("\n")).toContain("serve");
      expect(r.out.join("\n")).not.toContain("__worker");
    }
    const started = await gw(["__worker", "echo", "x", "--parent", "1", "--fds", "0"]);
    expect(started.code).toBe(2);
    expect(started.notes.join("\n")).toContain("index must be a whole number");
  });
});
