import { dlopen, ptr, type Pointer } from "bun:ffi";
import type { TLSSocket } from "node:tls";
import { openFirst } from "../linux/libc-names.ts";
import { RAW_TCP_FAILED, RAW_TCP_NOTHING, type OpenRawTcp, type RawTcp } from "../raw-tcp.ts";
import { errnoReaders } from "./errno.ts";
import { loadOnce } from "../load-once.ts";

const MSG_DONTWAIT = 0x40;
const MSG_NOSIGNAL = 0x4000;
const EINTR = 4;
const EAGAIN = 11;

function load() {
  try {
    return openFirst((name) =>
      dlopen(name, {
        // ssize_t as i32: a batch is at most a few hundred KiB, and i32 avoids a BigInt per call.
        send: { args: ["i32", "buffer", "u64", "i32"], returns: "i32" },
        recv: { args: ["i32", "ptr", "u64", "i32"], returns: "i32" },
        __errno_location: { args: [], returns: "ptr" },
        strerror: { args: ["i32"], returns: "cstring" },
      }),
    ).symbols;
  } catch {
    return undefined;
  }
}

type Symbols = NonNullable<ReturnType<typeof load>>;
const symbols = loadOnce(load);

/**
 * Bun's TLS socket keeps its descriptor on its native handle (`_handle.fd`, not a public API:
 * when a Bun release moves it, this finds none and the TLS library keeps writing, as under Deno).
 * The descriptor stays Bun's: Bun closes it, gw only sends on it (and, once it took the reading
 * from Bun's loop at CONNECT, reads it), and only while the handle still names it.
 */
export const openRawTcp: OpenRawTcp = (socket: TLSSocket) => {
  const handle = (socket as unknown as { _handle?: { fd?: unknown } })._handle;
  const fd = handle?.fd;
  const libc = symbols();
  if (!handle || typeof fd !== "number" || fd < 0 || !libc) return undefined;
  const { errno } = errnoReaders(libc);
  const raw: RawTcp = {
    fd,
    recv(buffer, offset, length) {
      if (handle.fd !== fd) return RAW_TCP_FAILED;
      if (offset < 0 || length <= 0 || offset + length > buffer.length) return RAW_TCP_NOTHING;
      for (;;) {
        const n = libc.recv(fd, ptr(buffer, offset) as Pointer, length, MSG_DONTWAIT);
        if (n >= 0) return n;
        const e = errno();
        if (e === EINTR) continue;
        return e === EAGAIN ? RAW_TCP_NOTHING : RAW_TCP_FAILED;
      }
    },
    send(data) {
      // Once Bun closed the socket its handle reads -1, and the number may already name another
      // connection: never send on it then.
      if (handle.fd !== fd) return -1;
      for (;;) {
        const n = libc.send(fd, data, data.length, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n >= 0) return n;
        const e = errno();
        if (e === EINTR) continue;
        return e === EAGAIN ? 0 : -1;
      }
    },
  };
  return raw;
};
