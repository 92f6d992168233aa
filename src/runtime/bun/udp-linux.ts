import { ptr, type Pointer } from "bun:ffi";
import { GsoSender } from "../linux/udp-gso-sender.ts";
import type { UdpSendCalls } from "../linux/udp-send-calls.ts";
import { loadUdpLibc, type UdpLibc } from "./udp-libc.ts";

/** The Linux-only extras of Bun's UDP sockets (opened or adopted): libc and the GSO sender. */

/** libc for the Linux-only extras; null elsewhere or when it cannot be bound (Bun's own calls still work). */
export function linuxLibc(): UdpLibc | null {
  if (process.platform !== "linux") return null;
  try {
    return loadUdpLibc();
  } catch {
    return null;
  }
}

/**
 * The senders' calls under Bun: a typed array's bytes stay where ptr() found them (JavaScriptCore
 * pins an array once its address is taken), so datagrams are sent from the caller's buffers, uncopied.
 */
export function bunSendCalls(libc: Pick<UdpLibc, "sendmsg" | "sendmmsg" | "errno">): UdpSendCalls {
  return {
    sendmsg: (fd, msghdr, flags) => libc.sendmsg(fd, msghdr as Pointer, flags),
    sendmmsg: (fd, vector, count, flags) => libc.sendmmsg(fd, vector as Pointer, count, flags),
    errno: () => libc.errno(),
    addressOf: (block) => ptr(block),
    place: (data) => ptr(data),
    released: () => {},
  };
}

/** The GSO sender for a socket of a known family; null means plain sends only. */
export function gsoSender(fd: number, family: string | undefined, libc: UdpLibc, plain: (batch: (Uint8Array | number | string)[]) => number): GsoSender | null {
  if (family !== "IPv4" && family !== "IPv6") return null;
  return new GsoSender(fd, family, bunSendCalls(libc), plain);
}
