import type { Result } from "../../errors.ts";
import { dieWithParent as dieWithParentOn } from "../linux/parent-death.ts";
import { loadDenoLibc } from "./libc.ts";

/** dieWithParent (linux/parent-death.ts) through Deno.dlopen; called once, at a worker's start. */
export function dieWithParent(parentPid: number): Result<void> {
  const libc = loadDenoLibc();
  return dieWithParentOn(
    { prctl: (option, arg2) => libc.raw.prctl(option, arg2, 0, 0, 0), getppid: () => libc.raw.getppid(), errno: libc.errno, strerror: libc.strerror },
    parentPid,
  );
}
