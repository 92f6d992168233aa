import { parentLink, spawnChild } from "../node-child-process.ts";
import { selfArgv } from "../self-argv.ts";
import type { WorkerProcesses } from "../worker-process.ts";
import { dieWithParent } from "./parent-death.ts";

/** Worker processes under Bun: node:child_process (shared with Deno) and prctl through bun:ffi. */
export const bunWorkerProcesses: WorkerProcesses = {
  selfArgv: selfArgv({ runtime: "bun", execPath: process.execPath, script: Bun.main }),
  spawn: spawnChild,
  parentLink,
  dieWithParent,
};
