/**
 * What the UDP senders (udp-plain-sender.ts, udp-gso-sender.ts) need from a runtime's FFI: the two
 * send calls, with their vectors given by address, and where the kernel may read each datagram.
 */
export interface UdpSendCalls {
  /** sendmsg(fd, the msghdr at `msghdr`, flags): bytes sent, or -1 (errno). */
  sendmsg(fd: number, msghdr: number, flags: number): number;
  /** sendmmsg(fd, the first mmsghdr at `vector`, how many, flags): how many went, or -1 (errno). */
  sendmmsg(fd: number, vector: number, count: number, flags: number): number;
  errno(): number;
  /** The address of a buffer the sender keeps for its whole life (its vectors). */
  addressOf(block: Uint8Array): number;
  /**
   * Where the kernel reads `data` from at the next send: the bytes themselves where the runtime
   * keeps a typed array's memory in place (Bun's ptr), else a copy this sender keeps
   * (datagramArena). Valid until `released`. -1 when a copy finds no room: send what is queued
   * (which releases it) and place again; after a release any datagram fits.
   */
  place(data: Uint8Array): number;
  /** After each send: what was placed before may be overwritten. */
  released(): void;
}

/** Room for any one GSO run (at most 64 KiB of payload) or a plain vector of 64 full-size records. */
const ARENA_BYTES = 256 * 1024;

/**
 * Copies of the datagrams waiting for a send, for a runtime that may move a typed array's bytes
 * between the call that queues a datagram and the send (Deno: V8 keeps small arrays in its heap),
 * or whose callers reuse the bytes before the send. A copy of a 1,400-byte record costs far less
 * than the system call per datagram it saves. `addressOf` is taken once: the arena's
 * ArrayBuffer stays where it is.
 */
export function datagramArena(addressOf: (block: Uint8Array) => number): Pick<UdpSendCalls, "place" | "released"> {
  const arena = new Uint8Array(new ArrayBuffer(ARENA_BYTES));
  const base = addressOf(arena);
  let used = 0;
  return {
    place(data) {
      if (used + data.byteLength > ARENA_BYTES) return -1;
      const at = used;
      arena.set(data, at);
      used = (at + data.byteLength + 7) & ~7;
      return base + at;
    },
    released() {
      used = 0;
    },
  };
}
