import { SockaddrCache } from "../linux/sockaddr-cache.ts";
import { writeSockaddrPort, type SocketFamily } from "../linux/sockaddr.ts";
import { GsoSender } from "../linux/udp-gso-sender.ts";
import { datagramArena, type UdpSendCalls } from "../linux/udp-send-calls.ts";
import type { UdpSocket } from "../udp.ts";
import { sendEach } from "../udp-batch.ts";
import { addressOf, type DenoLibc } from "./libc.ts";

/**
 * The sending half of a UdpSocket over a UDP descriptor gw reads itself (udp-adopt.ts,
 * udp-main-thread.ts), through Deno.dlopen: one datagram by sendto; a batch as under Bun, same-size
 * runs to one peer in one UDP GSO send and the rest in one sendmmsg, from copies (Deno may move a
 * small array's bytes before the send; a copy costs less than a call). Every call takes the bytes
 * at once, as the UdpSocket interface asks. Nothing is sent once `isOpen` says false.
 */
export function descriptorSends(libc: DenoLibc, fd: number, family: SocketFamily, isOpen: () => boolean): Pick<UdpSocket, "send" | "sendMany"> {
  const destinations = new SockaddrCache(family);
  const send = (data: Uint8Array, port: number, address: string): boolean => {
    if (!isOpen()) return false;
    const to = destinations.get(address);
    if (to.length === 0) return false;
    writeSockaddrPort(to.bytes, port);
    return Number(libc.raw.sendto(fd, data, data.byteLength, 0, to.bytes, to.length)) >= 0;
  };
  const calls: UdpSendCalls = {
    sendmsg: (socketFd, msghdr, flags) => libc.raw.sendmsg(socketFd, msghdr, flags),
    sendmmsg: (socketFd, vector, count, flags) => libc.raw.sendmmsg(socketFd, vector, count, flags),
    errno: libc.errno,
    addressOf,
    ...datagramArena(addressOf),
  };
  const batches = new GsoSender(fd, family, calls, (batch) => sendEach(send, batch));
  return { send, sendMany: (batch) => (isOpen() ? batches.sendMany(batch) : 0) };
}
