import { err, ok, type Result } from "../../errors.ts";
import type { HeldDescriptor } from "../held-descriptor.ts";
import type { OpenUdp, Receive, UdpCounters, UdpSocket } from "../udp.ts";
import { gsoCounters, type GsoStats } from "../linux/udp-gso-sender.ts";
import { raiseReceiveBuffer } from "../linux/socket-options.ts";
import { gsoSender, linuxLibc } from "./udp-linux.ts";
import { openMainWait, type MainWait, type MainWaitStats } from "./udp-main-wait.ts";
import { bunMainWaitIo, bunStreamSet } from "./udp-main-wait-io.ts";

/** Bun's socket plus how its sends went (UDP GSO or the plain path); null stats when GSO was never tried. */
export interface BunUdpSocket extends UdpSocket {
  readonly gso: GsoStats | null;
  /** SO_RCVBUF as the kernel reports it after raising it (twice the bytes asked: it counts overhead); -1 when unknown. */
  readonly receiveBuffer: number;
  /** What the main thread's own wait for datagrams did (udp-main-wait.ts); null where Bun's loop delivers them all. */
  readonly mainWait: MainWaitStats | null;
  stepAsideWhile(busy: () => boolean): void;
  alsoWaitFor(source: HeldDescriptor): void;
}

/** Where the socket comes from: bound here, or a descriptor another process bound (a worker's steered member). */
export type BunUdpPlace = { hostname: string; port: number } | { fd: number };

/** Bun.udpSocket behind the runtime interface; on Linux, sendMany sends same-size runs with UDP GSO. */
export async function openBunUdp(host: string, port: number): Promise<Result<BunUdpSocket>> {
  try {
    return ok(await bunUdpSocket({ hostname: host, port }));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") return err("udp_port_in_use", `UDP ${host}:${port} is already in use: stop the other service, or start gw with --no-dtls`);
    if (code === "EACCES" || code === "EPERM") return err("udp_forbidden", `not allowed to bind UDP ${host}:${port}: run as root or grant CAP_NET_BIND_SERVICE`);
    return err("udp_failed", `cannot bind UDP ${host}:${port}: ${(e as Error).message}`);
  }
}

/**
 * The socket itself; throws what Bun.udpSocket throws. Bun takes a descriptor through `fd`, the
 * option its own node:dgram uses for `bind({ fd })`, left out of its type declarations (as `fd`
 * on the socket is).
 */
export async function bunUdpSocket(place: BunUdpPlace): Promise<BunUdpSocket> {
  let handler: Receive = () => {};
  let wait: MainWait | null = null;
  /** Datagrams Bun's own loop delivered, and single sends Bun's `send` took. */
  let receivedByRuntime = 0;
  let sentSingly = 0;
  const options: Bun.udp.SocketOptions<"uint8array"> = {
    ...place,
    binaryType: "uint8array",
    socket: {
      data(_s, data, remotePort, remoteAddress) {
        receivedByRuntime++;
        handler(data, remotePort, remoteAddress);
        wait?.heard();
      },
      // A receive error (an ICMP error queued for the socket, e.g. a client's port gone) concerns one
      // peer; without a handler Bun raises it as an unhandled error. The DTLS peer's own timeouts end it.
      error() {},
    },
  };
  const socket = await Bun.udpSocket(options);
  const plainSendMany = (batch: (Uint8Array | number | string)[]): number => {
    try {
      return socket.sendMany(batch);
    } catch {
      return 0;
    }
  };
  const reported = (socket as unknown as { readonly fd?: number }).fd;
  const fd = typeof reported === "number" ? reported : -1;
  const libc = fd >= 0 ? linuxLibc() : null;
  const gso = libc === null ? null : gsoSender(fd, socket.address.family, libc, plainSendMany);
  wait = libc === null ? null : openMainWait(bunMainWaitIo(libc), fd, (data, p, address) => handler(data, p, address), bunStreamSet);
  return {
    port: socket.port,
    gso: gso?.stats ?? null,
    receiveBuffer: libc === null ? -1 : raiseReceiveBuffer(libc, fd),
    send: (data, p, address) => {
      let sent: boolean;
      try {
        sent = socket.send(data, p, address);
      } catch {
        return false;
      }
      if (sent) sentSingly++;
      return sent;
    },
    sendMany: gso === null ? plainSendMany : (batch) => gso.sendMany(batch),
    onDatagram: (h) => {
      handler = h;
    },
    stepAsideWhile: (busy) => wait?.stepAsideWhile(busy),
    takeStream: (socketFd, owner) => wait?.takeStream(socketFd, owner) ?? 0,
    releaseStream: (id, socketFd, socketClosed) => wait?.releaseStream(id, socketFd, socketClosed),
    alsoWaitFor: (source) => void wait?.alsoWaitFor(source),
    mainWait: wait?.stats ?? null,
    counters: () => bunUdpCounters(receivedByRuntime, sentSingly, wait?.stats ?? null, gso?.stats ?? null),
    close: () => {
      wait?.close();
      socket.close();
    },
  };
}

/**
 * UdpSocket.counters under Bun: datagrams received by Bun's loop and by gw's own wait (what the
 * wait did: its sleeps, the times it stepped aside or stopped for want of datagrams), and sent.
 */
function bunUdpCounters(receivedByRuntime: number, sentSingly: number, wait: MainWaitStats | null, gso: GsoStats | null): UdpCounters {
  const waited: Record<string, number> = wait === null ? {} : {
    received_wait: wait.reads,
    wait_sleeps: wait.sleeps,
    wait_quiet_sleeps: wait.quietSleeps,
    wait_asides: wait.asides,
    wait_colds: wait.colds,
    wait_held_reads: wait.heldReads,
    wait_stream_wakes: wait.streamWakes,
  };
  return { received_runtime: receivedByRuntime, ...waited, sent_single: sentSingly, ...(gso === null ? {} : gsoCounters(gso)) };
}

export const openUdp: OpenUdp = openBunUdp;
