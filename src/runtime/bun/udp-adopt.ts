import { createSocket, type Socket } from "node:dgram";
import { err, ok, type Result } from "../../errors.ts";
import type { AdoptUdp } from "../udp.ts";
import { ensureNonBlocking } from "../linux/fd-flags.ts";
import { SockaddrCache } from "../linux/sockaddr-cache.ts";
import { SOCKADDR_BYTES, writeSockaddrPort, type SocketFamily } from "../linux/sockaddr.ts";
import { MSG_DONTWAIT } from "../linux/udp-gso-abi.ts";
import type { BunUdpSocket } from "./udp-socket.ts";
import { gsoSender, linuxLibc, raiseReceiveBuffer } from "./udp-linux.ts";

type Batch = (Uint8Array | number | string)[];

/**
 * A worker process's UDP socket: its member of the main process's steered UDP group, handed over
 * as a descriptor. Bun.udpSocket cannot take a descriptor, node:dgram can (`bind({ fd })`), so
 * datagrams arrive through dgram's "message" event. Sends do not go through dgram: its send()
 * returns before the datagram leaves (measured under Bun 1.4.5: a buffer changed right after
 * send() went out changed) and reports no refusal, while the DTLS code reuses its buffers and
 * counts drops. So send is sendto(2) with MSG_DONTWAIT here, and sendMany the GSO sender with
 * that as its plain path, as for an opened socket. Linux only (gw's workers are).
 */
export const adoptUdp: AdoptUdp = async (fd) => adoptBunUdp(fd);

export async function adoptBunUdp(fd: number): Promise<Result<BunUdpSocket>> {
  if (!Number.isInteger(fd) || fd < 0) return err("udp_failed", `cannot adopt UDP fd ${fd}: not a descriptor (the main process hands it at 3, 4, ...)`);
  const libc = linuxLibc();
  if (libc === null) return err("udp_adopt_unsupported", "a handed UDP socket needs libc through bun:ffi (Linux): run gw with one process (no --workers)");
  // A spawn under Deno clears O_NONBLOCK on the open socket; dgram's reads must not block.
  const nonBlocking = ensureNonBlocking(libc, fd);
  if ("errno" in nonBlocking) return err("udp_failed", `cannot make UDP fd ${fd} non-blocking (errno ${nonBlocking.errno}): is it the socket the main process handed?`);

  const socket = createSocket("udp4"); // the type only steers dgram's own name look-ups, unused here
  let handler: (data: Uint8Array, port: number, address: string) => void = () => {};
  const bound = await new Promise<Error | null>((resolve) => {
    // A receive error (an ICMP error queued for the socket) concerns one peer; before the bind it is the bind's.
    socket.on("error", (e) => resolve(e));
    try {
      socket.bind({ fd }, () => resolve(null));
    } catch (e) {
      resolve(e as Error);
    }
  });
  if (bound !== null) {
    return err("udp_failed", `cannot take over UDP fd ${fd}: ${bound.message} (is it an open UDP socket, handed by the main process?)`);
  }
  const { port, family } = socket.address();
  if (family !== "IPv4" && family !== "IPv6") return err("udp_failed", `UDP fd ${fd} is a ${family} socket, not IPv4 or IPv6`);
  socket.on("message", (data, peer) => handler(data, peer.port, peer.address));

  const send = sendTo(fd, family, libc.sendto);
  const plainSendMany = (batch: Batch): number => {
    let sent = 0;
    for (let i = 0; i + 2 < batch.length; i += 3) if (send(batch[i] as Uint8Array, batch[i + 1] as number, batch[i + 2] as string)) sent++;
    return sent;
  };
  const gso = gsoSender(fd, family, libc, plainSendMany);
  const udp: BunUdpSocket = {
    port,
    gso: gso?.stats ?? null,
    receiveBuffer: raiseReceiveBuffer(libc, fd),
    send,
    sendMany: gso === null ? plainSendMany : (batch) => gso.sendMany(batch),
    onDatagram: (h) => {
      handler = h;
    },
    close: () => closeQuietly(socket),
  };
  return ok(udp);
}

/** One synchronous datagram to a peer given as text; false when it cannot be addressed or the kernel refused it. */
function sendTo(fd: number, family: SocketFamily, sendto: (fd: number, data: Uint8Array, flags: number, sockaddr: Uint8Array, length: number) => number) {
  const sockaddrs = new SockaddrCache(family);
  const name = new Uint8Array(SOCKADDR_BYTES);
  return (data: Uint8Array, port: number, address: string): boolean => {
    const peer = sockaddrs.get(address);
    if (peer.length === 0) return false;
    name.set(peer.bytes);
    writeSockaddrPort(name, port);
    try {
      return sendto(fd, data, MSG_DONTWAIT, name, peer.length) >= 0;
    } catch {
      return false; // e.g. a detached buffer; the caller counts it as a drop
    }
  };
}

function closeQuietly(socket: Socket): void {
  try {
    socket.close();
  } catch {
    // closed already
  }
}
