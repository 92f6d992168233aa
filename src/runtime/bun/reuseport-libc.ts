import { dlopen, ptr } from "bun:ffi";
import { errnoReaders } from "./errno.ts";
import { openFirst } from "../linux/libc-names.ts";
import type { ReuseportLibc } from "../linux/reuseport-libc.ts";
import { SOL_SOCKET } from "../linux/reuseport-libc.ts";
import { SOCK_FPROG_BYTES, sockFprog } from "../linux/sock-fprog.ts";

/** The libc calls a steered SO_REUSEPORT group is made with (linux/steered-group.ts), bound with bun:ffi. */
export function loadBunReuseportLibc(): ReuseportLibc {
  const { symbols } = openFirst((name) => dlopen(name, {
    socket: { args: ["i32", "i32", "i32"], returns: "i32" },
    setsockopt: { args: ["i32", "i32", "i32", "ptr", "u32"], returns: "i32" },
    bind: { args: ["i32", "ptr", "u32"], returns: "i32" },
    listen: { args: ["i32", "i32"], returns: "i32" },
    getsockname: { args: ["i32", "ptr", "ptr"], returns: "i32" },
    close: { args: ["i32"], returns: "i32" },
    strerror: { args: ["i32"], returns: "cstring" },
    __errno_location: { args: [], returns: "ptr" },
  }));
  return {
    socket: (domain, type, protocol) => symbols.socket(domain, type, protocol),
    setIntOption: (fd, level, name, value) => symbols.setsockopt(fd, level, name, new Int32Array([value]), 4),
    attachFilter: (fd, name, program) => {
      // `program` stays referenced until the call returns; the kernel copies it during setsockopt.
      const fprog = sockFprog(program, BigInt(ptr(program)));
      return symbols.setsockopt(fd, SOL_SOCKET, name, fprog, SOCK_FPROG_BYTES);
    },
    bind: (fd, sockaddr, length) => symbols.bind(fd, sockaddr, length),
    listen: (fd, backlog) => symbols.listen(fd, backlog),
    getsockname: (fd, sockaddr) => symbols.getsockname(fd, sockaddr, new Uint32Array([sockaddr.byteLength])),
    close: (fd) => symbols.close(fd),
    ...errnoReaders(symbols),
  };
}
