import { SO_RCVBUF, SO_RCVBUFFORCE, SOL_SOCKET, UDP_RECEIVE_BUFFER_BYTES } from "../linux/socket-options.ts";
import { GsoSender } from "./udp-gso-sender.ts";
import { loadUdpLibc, type UdpLibc } from "./udp-libc.ts";

/** The Linux-only extras of Bun's UDP sockets (opened or adopted): libc, the GSO sender, the receive buffer. */

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

/** A receive buffer that absorbs an upload burst (see UDP_RECEIVE_BUFFER_BYTES); past rmem_max when root, else up to it. */
export function raiseReceiveBuffer(libc: UdpLibc, fd: number): number {
  if (libc.setIntOption(fd, SOL_SOCKET, SO_RCVBUFFORCE, UDP_RECEIVE_BUFFER_BYTES) !== 0) {
    libc.setIntOption(fd, SOL_SOCKET, SO_RCVBUF, UDP_RECEIVE_BUFFER_BYTES);
  }
  return libc.getIntOption(fd, SOL_SOCKET, SO_RCVBUF);
}
