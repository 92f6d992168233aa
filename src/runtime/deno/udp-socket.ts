import { createSocket } from "node:dgram";
import { ok } from "../../errors.ts";
import type { OpenUdp, Receive, UdpSocket } from "../udp.ts";
import { sendEach } from "../udp-batch.ts";
import { bindUdp, type UdpBindLibc } from "../linux/udp-bind.ts";
import { loadDenoReuseportLibc } from "./reuseport-libc.ts";
import { udpOverDescriptor } from "./udp-adopt.ts";
import { loadDenoLibc, type DenoLibc } from "./libc.ts";
import { openUdpOnMainThread } from "./udp-main-thread.ts";
import { udpBindFailure } from "./udp-bind-failure.ts";

/**
 * Deno's UDP sends are asynchronous: a send that cannot go at once reads the caller's bytes when
 * it goes, after the call returned, while gw's DTLS outbox reuses its slots as soon as a flush
 * returns (measured on Deno 2.9.6: in bursts of 512 sends from 32 reused buffers, most datagrams
 * left with a later send's bytes, possibly another peer's record). So each send takes a copy, and
 * at most this many copies wait at once; past that a send is refused like a full buffer (the
 * caller counts it as lost).
 */
const MAX_WAITING_SENDS = 4096;

/** Copies each datagram before handing it to an asynchronous send; refuses past the bound. */
function copyingSends(sendAsync: (copy: Uint8Array, port: number, address: string) => Promise<unknown>) {
  let waiting = 0;
  const settled = () => void waiting--;
  return (data: Uint8Array, port: number, address: string): boolean => {
    if (waiting >= MAX_WAITING_SENDS) return false;
    waiting++;
    try {
      // A refusal shows up later and is dropped like a full buffer.
      sendAsync(data.slice(), port, address).then(settled, settled);
      return true;
    } catch {
      settled(); // a closed socket may refuse at once
      return false;
    }
  };
}

/**
 * UDP under Deno. On Linux node:dgram binds the socket, Deno's event loop wakes the main thread
 * for it, and gw reads and sends on its descriptor itself (udp-main-thread.ts: the rest of each
 * wake-up's datagrams by recvfrom, sends by sendmmsg and UDP GSO through Deno.dlopen):
 * Deno.listenDatagram and node:dgram deliver one datagram per promise and send asynchronously,
 * which held DTLS through Deno to a third of ocserv's throughput (docs/runtimes.md). Where that
 * descriptor cannot be used, gw binds the socket with libc and a reader worker reads it
 * (udp-adopt.ts), as a worker process reads its handed one. Elsewhere, or when libc cannot be
 * bound, Deno.listenDatagram (several times node:dgram's rate under Deno), which Deno offers only
 * with --unstable-net (deno.json asks for it; `deno run` outside the repository needs the flag);
 * without it, node:dgram.
 */
export const openUdp: OpenUdp = async (host, port) => {
  const libc = Deno.build.os === "linux" ? bindingOrNull() : null;
  if (libc !== null) {
    const onMainThread = await openUdpOnMainThread(libc.deno, host, port);
    if (onMainThread.ok || onMainThread.error.code !== "udp_descriptor_unknown") return onMainThread;
    console.error(`udp: ${onMainThread.error.message}; gw binds the socket itself and reads it in a worker thread, which adds a wake-up to every datagram`);
    const bound = bindUdp(libc.bind, host, port);
    if (!bound.ok) return bound;
    return udpOverDescriptor(bound.value.fd, "this process");
  }
  try {
    if ("listenDatagram" in Deno) return ok(listenDatagram(host, port));
    console.error("udp: Deno.listenDatagram needs --unstable-net (deno.json sets it for runs inside the repository); using node:dgram, which is slower");
    return ok(await dgram(host, port));
  } catch (e) {
    return udpBindFailure(`UDP ${host}:${port}`, e);
  }
};

/** libc for binding, or null where Deno.dlopen is refused (no --allow-ffi): Deno's own socket then. */
function bindingOrNull(): { deno: DenoLibc; bind: UdpBindLibc } | null {
  try {
    return { deno: loadDenoLibc(), bind: loadDenoReuseportLibc() };
  } catch (e) {
    console.error(`udp: libc cannot be bound (${(e as Error).message}); using Deno's own UDP socket, which is slower`);
    return null;
  }
}

function listenDatagram(host: string, port: number): UdpSocket {
  const conn = Deno.listenDatagram({ hostname: host, port, transport: "udp" });
  let handler: Receive = () => {};
  let open = true;
  void (async () => {
    try {
      for await (const [data, from] of conn) handler(data, (from as Deno.NetAddr).port, (from as Deno.NetAddr).hostname);
    } catch (e) {
      if (open) console.error(`udp ${host}:${port}: receive loop ended: ${(e as Error).message}`);
    }
  })();
  const sendCopy = copyingSends((copy, p, address) => conn.send(copy, { transport: "udp", hostname: address, port: p }));
  const send = (data: Uint8Array, p: number, address: string) => open && sendCopy(data, p, address);
  return {
    port: (conn.addr as Deno.NetAddr).port,
    send,
    sendMany: (batch) => sendEach(send, batch),
    onDatagram: (h) => void (handler = h),
    close() {
      if (!open) return;
      open = false;
      conn.close();
    },
  };
}

function dgram(host: string, port: number): Promise<UdpSocket> {
  const socket = createSocket({ type: host.includes(":") ? "udp6" : "udp4" });
  let handler: Receive = () => {};
  socket.on("message", (data, from) => handler(data, from.port, from.address));
  return new Promise((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(port, host, () => {
      socket.off("error", reject);
      // Deno's node:dgram sends through the same asynchronous machinery.
      const send = copyingSends(
        (copy, p, address) => new Promise<void>((resolve) => socket.send(copy, p, address, () => resolve())),
      );
      resolve({
        port: socket.address().port,
        send,
        sendMany: (batch) => sendEach(send, batch),
        onDatagram: (h) => void (handler = h),
        close: () => socket.close(),
      });
    });
  });
}
