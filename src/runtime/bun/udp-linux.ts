import { GsoSender } from "./udp-gso-sender.ts";
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

/** The GSO sender for a socket of a known family; null means plain sends only. */
export function gsoSender(fd: number, family: string | undefined, libc: UdpLibc, plain: (batch: (Uint8Array | number | string)[]) => number): GsoSender | null {
  if (family !== "IPv4" && family !== "IPv6") return null;
  return new GsoSender(fd, family, libc, plain);
}
