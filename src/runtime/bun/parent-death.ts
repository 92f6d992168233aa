import { dlopen } from "bun:ffi";
import type { Result } from "../../errors.ts";
import { errnoReaders } from "./errno.ts";
import { openFirst } from "../linux/libc-names.ts";
import { dieWithParent as dieWithParentOn } from "../linux/parent-death.ts";

/** dieWithParent (linux/parent-death.ts) through bun:ffi; called once, at a worker's start. */
export function dieWithParent(parentPid: number): Result<void> {
  const { symbols, close } = openFirst((name) =>
    dlopen(name, {
      prctl: { args: ["i32", "u64", "u64", "u64", "u64"], returns: "i32" },
      getppid: { args: [], returns: "i32" },
      strerror: { args: ["i32"], returns: "cstring" },
      __errno_location: { args: [], returns: "ptr" },
    }),
  );
  try {
    return dieWithParentOn(
      {
        prctl: (option, arg2) => symbols.prctl(option, arg2, 0, 0, 0),
        getppid: () => symbols.getppid(),
        ...errnoReaders(symbols),
      },
      parentPid,
    );
  } finally {
    close();
  }
}
