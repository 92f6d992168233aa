import { describe, expect, test } from "bun:test";
import { selfArgv } from "../../../src/runtime/self-argv.ts";
import { handedFds, workerArgv } from "../../../src/serve/worker-argv.ts";

describe("how a worker process is started: the same program again", () => {
  test("Bun from the sources or the bundle: bun and the entry file", () => {
    expect(selfArgv({ runtime: "bun", execPath: "/usr/bin/bun", script: "/opt/gw/src/main.ts" })).toEqual(["/usr/bin/bun", "/opt/gw/src/main.ts"]);
    expect(selfArgv({ runtime: "bun", execPath: "/usr/bin/bun", script: "/opt/gw/dist/gw.mjs" })).toEqual(["/usr/bin/bun", "/opt/gw/dist/gw.mjs"]);
  });

  test("the bun build --compile executable: the executable alone (its entry is in /$bunfs/)", () => {
    expect(selfArgv({ runtime: "bun", execPath: "/usr/local/bin/gw", script: "/$bunfs/root/gw" })).toEqual(["/usr/local/bin/gw"]);
  });

  test("Deno: deno run, its flags and the entry; a deno compile executable alone", () => {
    const deno = { runtime: "deno" as const, execPath: "/usr/bin/deno", script: "/opt/gw/dist/gw.mjs", flags: ["-A", "--unstable-net"] };
    expect(selfArgv({ ...deno, standalone: false })).toEqual(["/usr/bin/deno", "run", "-A", "--unstable-net", "/opt/gw/dist/gw.mjs"]);
    expect(selfArgv({ ...deno, execPath: "/usr/local/bin/gw-deno", standalone: true })).toEqual(["/usr/local/bin/gw-deno"]);
  });

  test("the worker command line and its descriptors", () => {
    expect(workerArgv(["/usr/local/bin/gw"], { role: "echo", index: 1, parentPid: 42, fdCount: 2 })).toEqual(["/usr/local/bin/gw", "__worker", "echo", "1", "--parent", "42", "--fds", "2"]);
    expect(handedFds(3)).toEqual([3, 4, 5]);
  });
});
