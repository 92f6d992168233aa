import { createSocket, type Socket } from "node:dgram";
import { err, ok, type Result } from "../../errors.ts";
import { IPPROTO_IPV6, IPV6_V6ONLY, SOCK_DGRAM } from "../linux/reuseport-libc.ts";
import { raiseReceiveBuffer, SOL_SOCKET } from "../linux/socket-options.ts";
import { encodeSockaddr, readSockaddr, SOCKADDR_BYTES, type SocketFamily } from "../linux/sockaddr.ts";
import type { Receive, UdpSocket } from "../udp.ts";
import { addressOf, type DenoLibc } from "./libc.ts";
import { udpBindFailure } from "./udp-bind-failure.ts";
import { descriptorSocket } from "./udp-descriptor-socket.ts";
import { UDP_PAYLOAD_MAX } from "../linux/udp-gso-abi.ts";
import { openDescriptors } from "../linux/open-descriptors.ts";

const SO_TYPE = 3;
/**
 * Datagrams read per wake-up beyond the runtime's own: past this the next turn of the runtime's
 * receive loop reads on (the socket is still readable to it), so a flood does not hold the
 * thread from timers and TLS for long.
 */
const READS_PER_WAKE = 256;

/**
 * A UDP socket read on the main thread, woken by Deno's own event loop: node:dgram binds it and
 * delivers the first datagram of each wake-up; gw then reads what else is queued itself, through
 * Deno.dlopen on the socket's descriptor, and sends as a handed socket does (sendto, sendmmsg,
 * UDP GSO). A reader thread in front of the main thread (udp-adopt.ts) costs a thread (about 10
 * MiB) and every datagram a second thread's wake-up (docs/runtimes.md); node:dgram alone costs its
 * machinery per datagram.
 *
 * The descriptor is not offered by Deno: it is the one UDP socket bound to the port that was not
 * open before the bind (/proc/self/fd, by the socket's inode). Error codes as OpenUdp's;
 * `udp_descriptor_unknown` when the descriptor cannot be found or cannot serve both IPv4 and IPv6
 * clients on "::" (the caller then binds the socket itself).
 */
export async function openUdpOnMainThread(libc: DenoLibc, host: string, port: number): Promise<Result<UdpSocket>> {
  const family: SocketFamily = host.includes(":") ? "IPv6" : "IPv4";
  const before = new Set(openSockets().map(({ inode }) => inode));
  const bound = await bindDgram(host, port, family);
  if (!bound.ok) return bound;
  const socket = bound.value;
  const boundPort = socket.address().port;
  const fd = openSockets().find(({ fd, inode }) => !before.has(inode) && isUdpOnPort(libc, fd, boundPort))?.fd;
  const giveUp = async (why: string) => {
    await closed(socket); // the caller binds the port itself next
    return err("udp_descriptor_unknown", why);
  };
  if (fd === undefined) return giveUp(`the descriptor of Deno's UDP socket on port ${boundPort} was not found`);
  if (host === "::" && libc.getIntOption(fd, IPPROTO_IPV6, IPV6_V6ONLY) !== 0) return giveUp("Deno's UDP socket on :: takes IPv6 clients only (net.ipv6.bindv6only is 1)");
  raiseReceiveBuffer(libc, fd);

  const { socket: udp, deliver, isOpen } = descriptorSocket(libc, fd, family, boundPort, () => socket.close()); // the descriptor is Deno's: closed with its socket
  const drain = drainer(libc, fd, isOpen);
  const canonical = canonicalAddress(family);
  socket.on("message", (data: Uint8Array, from: { address: string; port: number }) => {
    if (!isOpen()) return;
    const address = canonical(from.address);
    if (address !== null) deliver(data, from.port, address);
    drain(deliver);
  });
  socket.on("error", (e: Error) => console.error(`udp ${host}:${boundPort}: ${e.message}`));
  return ok(udp);
}

/** Reads queued datagrams with recvfrom until the socket is empty or READS_PER_WAKE were read. */
function drainer(libc: DenoLibc, fd: number, isOpen: () => boolean): (handler: Receive) => void {
  // The source's sockaddr, then the datagram. Both arrays have ArrayBuffers of their own, which V8
  // keeps off its heap, so the addresses taken here hold for every later call.
  const buffer = new Uint8Array(SOCKADDR_BYTES + UDP_PAYLOAD_MAX);
  const bufferAt = addressOf(buffer);
  const addressLength = new Uint32Array(new ArrayBuffer(4));
  const addressLengthAt = addressOf(addressLength);
  return (handler) => {
    for (let reads = 0; reads < READS_PER_WAKE && isOpen(); reads++) {
      addressLength[0] = SOCKADDR_BYTES;
      const n = Number(libc.raw.recvfrom(fd, bufferAt + SOCKADDR_BYTES, UDP_PAYLOAD_MAX, 0, bufferAt, addressLengthAt));
      if (n < 0) return; // EAGAIN: empty (the runtime's loop waits again); a real failure it reports
      const from = readSockaddr(buffer);
      if (from !== null) handler(buffer.subarray(SOCKADDR_BYTES, SOCKADDR_BYTES + n), from.port, from.address);
    }
  };
}

/**
 * node:dgram's spelling of a source address in the form gw's own reads give it (readSockaddr: an
 * IPv4 client of a dual-stack socket as a.b.c.d), so both reach the DTLS server as one peer. The
 * last answer is kept: a wake-up's first datagram mostly comes from the peer of the one before.
 */
function canonicalAddress(family: SocketFamily): (address: string) => string | null {
  const scratch = new Uint8Array(SOCKADDR_BYTES);
  let lastText = "";
  let lastCanonical: string | null = null;
  return (address) => {
    if (address === lastText) return lastCanonical;
    lastText = address;
    lastCanonical = encodeSockaddr(scratch, address, family) === 0 ? null : (readSockaddr(scratch)?.address ?? null);
    return lastCanonical;
  };
}

function bindDgram(host: string, port: number, family: SocketFamily): Promise<Result<Socket>> {
  const socket = createSocket(family === "IPv6" ? { type: "udp6", ipv6Only: false } : { type: "udp4" });
  const where = family === "IPv6" ? `UDP [${host}]:${port}` : `UDP ${host}:${port}`;
  return new Promise((resolve) => {
    const failed = (e: Error) => {
      try {
        socket.close();
      } catch {
        // never bound: nothing to close
      }
      resolve(udpBindFailure(where, e));
    };
    socket.once("error", failed);
    socket.bind(port, host, () => {
      socket.off("error", failed);
      resolve(ok(socket));
    });
  });
}

/** Closes a node:dgram socket and waits until its port is free again (Deno closes it later). */
function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => socket.close(() => resolve()));
}

/**
 * This process's open sockets, each with its inode ("socket:[inode]"), which names one socket
 * while it is open where a descriptor number may be reused (the directory's own, read here).
 */
function openSockets(): { fd: number; inode: string }[] {
  return openDescriptors()
    .filter(({ target }) => target.startsWith("socket:"))
    .map(({ fd, target }) => ({ fd, inode: target }));
}

function isUdpOnPort(libc: DenoLibc, fd: number, port: number): boolean {
  const name = new Uint8Array(SOCKADDR_BYTES);
  if (libc.raw.getsockname(fd, name, new Uint32Array([SOCKADDR_BYTES])) !== 0) return false;
  return libc.getIntOption(fd, SOL_SOCKET, SO_TYPE) === SOCK_DGRAM && readSockaddr(name)?.port === port;
}
