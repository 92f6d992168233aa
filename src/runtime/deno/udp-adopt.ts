import { err, ok, type Result } from "../../errors.ts";
import { logLine, type Log } from "../../log/log-line.ts";
import { ensureNonBlocking } from "../linux/fd-flags.ts";
import { readSockaddr, SOCKADDR_BYTES, sockaddrFamily } from "../linux/sockaddr.ts";
import { AF_INET6 } from "../linux/tun-libc.ts";
import { startReader } from "../linux/tun-reader.ts";
import { workerUrl } from "../linux/worker-url.ts";
import { raiseReceiveBuffer } from "../linux/socket-options.ts";
import type { AdoptUdp, UdpSocket } from "../udp.ts";
import { loadDenoLibc } from "./libc.ts";
import { descriptorSocket } from "./udp-descriptor-socket.ts";

const readerUrl = () => workerUrl(import.meta.url, "./udp-worker.ts", "./udp-worker-deno.mjs");

/**
 * A worker process's member of the steered UDP group, over its handed descriptor. Deno cannot
 * wrap a descriptor (Deno.listenDatagram takes none; node:dgram's bind({ fd }) throws
 * ERR_INVALID_FD_TYPE, Deno 2.9.6), so the socket is read by gw itself (udpOverDescriptor).
 */
export const adoptUdp: AdoptUdp = (fd, log) => udpOverDescriptor(fd, "this worker", log);

/**
 * A UdpSocket over a bound UDP descriptor, read the way a TUN queue is: a worker blocks in
 * epoll_wait and fills a shared ring (udp-worker.ts); datagrams are sent through Deno.dlopen
 * (descriptorSocket: sendto, or a batch's sendmmsg and UDP GSO sends), which take the bytes at the
 * call, as the UdpSocket interface asks. Each datagram wakes two threads in turn (the reader, then
 * the main thread): the main process reads its own socket on the main thread instead
 * (udp-main-thread.ts) and comes here only where that cannot be done. The receive buffer is raised as under Bun. `where` names the process
 * in the log line of a reader that stops ("this worker", "this process"). The descriptor is the
 * socket's from here on: it is closed with the socket, and at once when this fails.
 */
export async function udpOverDescriptor(fd: number, where: string, log: Log = (message) => console.error(message)): Promise<Result<UdpSocket>> {
  if (!Number.isInteger(fd) || fd < 0) return err("udp_failed", `cannot take over the UDP socket (fd ${fd}): not a descriptor`);
  const libc = loadDenoLibc();
  const fail = (why: string) => {
    libc.close(fd);
    return err("udp_failed", `cannot take over the UDP socket (fd ${fd}): ${why}`);
  };
  const nonBlocking = ensureNonBlocking(libc, fd);
  if ("errno" in nonBlocking) return fail(`fcntl: ${libc.strerror(nonBlocking.errno)}`);
  const bound = new Uint8Array(SOCKADDR_BYTES);
  if (libc.raw.getsockname(fd, bound, new Uint32Array([SOCKADDR_BYTES])) !== 0) return fail(`getsockname: ${libc.strerror(libc.errno())}`);
  const local = readSockaddr(bound);
  if (local === null) return fail("not an IPv4 or IPv6 socket");
  const family = sockaddrFamily(bound) === AF_INET6 ? "IPv6" : "IPv4";
  raiseReceiveBuffer(libc, fd);

  let stopReader = () => {};
  const { socket, deliver } = descriptorSocket(libc, fd, family, local.port, () => {
    stopReader();
    libc.close(fd);
  });
  const reader = await startReader(libc, readerUrl(), fd, `udp fd ${fd}`, SOCKADDR_BYTES, (why) => log(logLine`udp fd ${fd}: datagram reader stopped, DTLS is down in ${where}: ${why}`), "keep");
  if (!reader.ok) return fail(reader.error.message);
  stopReader = () => reader.value.stop();
  // Each read is the source's sockaddr, then the datagram (udp-worker.ts).
  reader.value.setHandler((reads) => {
    for (const read of reads) {
      const from = readSockaddr(read);
      if (from !== null) deliver(read.subarray(SOCKADDR_BYTES), from.port, from.address);
    }
  });
  return ok(socket);
};
