import { errnoReaders } from "./errno.ts";
import { openFirst } from "../linux/libc-names.ts";
import type { ReuseportLibc } from "../linux/reuseport-libc.ts";
import { SOL_SOCKET } from "../linux/reuseport-libc.ts";
import { SOCK_FPROG_BYTES, sockFprog } from "../linux/sock-fprog.ts";

const SYMBOLS = {
  socket: { parameters: ["i32", "i32", "i32"], result: "i32" },
  setsockopt: { parameters: ["i32", "i32", "i32", "buffer", "u32"], result: "i32" },
  bind: { parameters: ["i32", "buffer", "u32"], result: "i32" },
  listen: { parameters: ["i32", "i32"], result: "i32" },
  getsockname: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  strerror: { parameters: ["i32"], result: "pointer" },
  __errno_location: { parameters: [], result: "pointer" },
} as const;

/** The libc calls a steered SO_REUSEPORT group is made with (linux/steered-group.ts), through Deno.dlopen. */
export function loadDenoReuseportLibc(): ReuseportLibc {
  const { symbols } = openFirst((name) => Deno.dlopen(name, SYMBOLS));
  return {
    socket: (domain, type, protocol) => symbols.socket(domain, type, protocol),
    setIntOption: (fd, level, name, value) => symbols.setsockopt(fd, level, name, new Int32Array([value]), 4),
    attachFilter: (fd, name, program) => {
      // `program` stays referenced until the call returns; the kernel copies it during setsockopt.
      const address = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(program)));
      return symbols.setsockopt(fd, SOL_SOCKET, name, sockFprog(program, address), SOCK_FPROG_BYTES);
    },
    bind: (fd, sockaddr, length) => symbols.bind(fd, sockaddr, length),
    listen: (fd, backlog) => symbols.listen(fd, backlog),
    getsockname: (fd, sockaddr) => symbols.getsockname(fd, sockaddr, new Uint32Array([sockaddr.byteLength])),
    close: (fd) => symbols.close(fd),
    ...errnoReaders(symbols),
  };
}
