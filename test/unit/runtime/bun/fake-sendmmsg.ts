/**
 * A sendmmsg stand-in for unit tests: reads the mmsghdr vector it is pointed at (as the kernel
 * would) and records each datagram's first byte, length, port and IPv4 address; `script` makes
 * chosen calls fail or take fewer datagrams than offered.
 */
import { read } from "bun:ffi";
import { IOVEC, MMSGHDR, MSGHDR } from "../../../../src/runtime/linux/udp-gso-abi.ts";

export interface SentDatagram {
  first: number;
  length: number;
  port: number;
  address: string;
}

/** One call's outcome: take at most `take` datagrams, or fail with `errno` before taking any. */
export type FakeStep = { take: number } | { errno: number };

export function fakeSendmmsg(script: FakeStep[] = []) {
  const sent: SentDatagram[] = [];
  const calls: number[] = [];
  const state = { sent, calls, lastErrno: 0, sendmmsg: (_fd: number, vector: number, count: number, _flags: number): number => 0 };
  state.sendmmsg = (_fd, vector, count) => {
    calls.push(count);
    const step = script.shift() ?? { take: count };
    if ("errno" in step) {
      state.lastErrno = step.errno;
      return -1;
    }
    state.lastErrno = 0;
    const n = Math.min(step.take, count);
    for (let i = 0; i < n; i++) {
      const header = vector + i * MMSGHDR.bytes + MMSGHDR.hdr;
      const name = read.ptr(header as never, MSGHDR.name);
      const iov = read.ptr(header as never, MSGHDR.iov);
      const base = read.ptr(iov as never, IOVEC.base);
      const length = Number(read.u64(iov as never, IOVEC.len));
      const port = (read.u8(name as never, 2) << 8) | read.u8(name as never, 3);
      const address = [4, 5, 6, 7].map((k) => read.u8(name as never, k)).join(".");
      sent.push({ first: read.u8(base as never, 0), length, port, address });
    }
    return n;
  };
  return state;
}
