import { SockaddrCache } from "../linux/sockaddr-cache.ts";
import { writeSockaddrPort, type SocketFamily } from "../linux/sockaddr.ts";
import { gsoCounters, GsoSender } from "../linux/udp-gso-sender.ts";
import { datagramArena, type UdpSendCalls } from "../linux/udp-send-calls.ts";
import type { Receive, UdpSocket } from "../udp.ts";
import { sendEach } from "../udp-batch.ts";
import { addressOf, type DenoLibc } from "./libc.ts";

/**
 * A UdpSocket over a UDP descriptor gw reads itself (udp-adopt.ts, udp-main-thread.ts), and
 * `deliver`, through which the reading side hands each datagram to the socket's handler. Sends go
 * through Deno.dlopen: one datagram by sendto; a batch as under Bun, same-size runs to one peer in
 * one UDP GSO send and the rest in one sendmmsg, from copies (Deno may move a small array's bytes
 * before the send; a copy costs less than a call). Every call takes the bytes at once, as the
 * UdpSocket interface asks. `close` stops the sends, then runs `release` (stop reading, close the
 * descriptor), once.
 */
export function descriptorSocket(
  libc: DenoLibc,
  fd: number,
  family: SocketFamily,
  port: number,
  release: () => void,
): { socket: UdpSocket; deliver: Receive; isOpen: () => boolean } {
  let open = true;
  let handler: Receive = () => {};
  /** For counters(): datagrams handed in by the reading side, single sends the kernel took. */
  let received = 0;
  let sentSingly = 0;
  const destinations = new SockaddrCache(family);
  const sendTo = (data: Uint8Array, to: number, address: string): boolean => {
    if (!open) return false;
    const sockaddr = destinations.get(address);
    if (sockaddr.length === 0) return false;
    writeSockaddrPort(sockaddr.bytes, to);
    return Number(libc.raw.sendto(fd, data, data.byteLength, 0, sockaddr.bytes, sockaddr.length)) >= 0;
  };
  const calls: UdpSendCalls = {
    sendmsg: (socketFd, msghdr, flags) => libc.raw.sendmsg(socketFd, msghdr, flags),
    sendmmsg: (socketFd, vector, count, flags) => libc.raw.sendmmsg(socketFd, vector, count, flags),
    errno: libc.errno,
    addressOf,
    ...datagramArena(addressOf),
  };
  // A batch's datagrams that fall back to one sendto each count as the batch's (sent_fallback_datagrams), not as single sends.
  const batches = new GsoSender(fd, family, calls, (batch) => sendEach(sendTo, batch));
  const send = (data: Uint8Array, to: number, address: string): boolean => {
    const sent = sendTo(data, to, address);
    if (sent) sentSingly++;
    return sent;
  };
  const socket: UdpSocket = {
    port,
    send,
    sendMany: (batch) => (open ? batches.sendMany(batch) : 0),
    onDatagram: (h) => void (handler = h),
    counters: () => ({ received, sent_single: sentSingly, ...gsoCounters(batches.stats) }),
    close() {
      if (!open) return;
      open = false;
      release();
    },
  };
  const deliver: Receive = (data, from, address) => {
    received++;
    handler(data, from, address);
  };
  return { socket, deliver, isOpen: () => open };
}
