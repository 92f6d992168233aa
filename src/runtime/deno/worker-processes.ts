import { fileURLToPath } from "node:url";
import { parentLink, spawnChild } from "../node-child-process.ts";
import { selfArgv } from "../self-argv.ts";
import type { WorkerProcesses } from "../worker-process.ts";
import { dieWithParent } from "./parent-death.ts";

/**
 * Worker processes under Deno: node:child_process (shared with Bun) and prctl through
 * Deno.dlopen. A worker gets every permission (gw is run with -A) and --unstable-net when this
 * process has its API (Deno.listenDatagram), which a flag or deno.json may have turned on.
 */
export const denoWorkerProcesses: WorkerProcesses = {
  selfArgv: selfArgv({
    runtime: "deno",
    execPath: Deno.execPath(),
    script: fileURLToPath(Deno.mainModule),
    standalone: Deno.build.standalone === true,
    flags: ["-A", ...("listenDatagram" in Deno ? ["--unstable-net"] : [])],
  }),
  spawn: spawnChild,
  parentLink,
  dieWithParent,
};
