import { dlopen, read } from "bun:ffi";
import { openFirst } from "../linux/libc-names.ts";

/**
 * The libc calls the UDP GSO send path needs, bound with bun:ffi. sendmsg returns ssize_t, bound
 * as i32: one GSO send carries at most 64 KiB and -1 keeps its value, and i32 avoids a BigInt per call.
 */
export function loadUdpLibc() {
  const { symbols } = openFirst((name) => dlopen(name, {
    sendmsg: { args: ["i32", "ptr", "i32"], returns: "i32" },
    __errno_location: { args: [], returns: "ptr" },
  }));
  return {
    /** sendmsg(fd, msghdr at `msghdr`, flags). */
    sendmsg: symbols.sendmsg,
    errno: (): number => {
      const at = symbols.__errno_location();
      return at === null ? 0 : read.i32(at, 0);
    },
  };
}

export type UdpLibc = ReturnType<typeof loadUdpLibc>;
