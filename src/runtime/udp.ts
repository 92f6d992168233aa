import type { Result } from "../errors.ts";
import type { Log } from "../log/log-line.ts";
import type { HeldDescriptor } from "./held-descriptor.ts";

/** What a socket's reading side hands each datagram to; `data` is only valid during the call. */
export type Receive = (data: Uint8Array, port: number, address: string) => void;

/** One bound UDP socket: what the DTLS server needs, and nothing more. */
export interface UdpSocket {
  readonly port: number;
  /**
   * Sends one datagram; false when the kernel refused it (buffer full): the caller counts a drop.
   * The bytes are taken at the call: the caller may reuse `data` as soon as it returns (the DTLS
   * outbox does); a runtime whose sends complete later copies them.
   */
  send(data: Uint8Array, port: number, address: string): boolean;
  /**
   * Sends a batch in as few system calls as the platform allows (sendmmsg; under Bun on Linux, UDP
   * GSO for runs of same-size datagrams to one peer); returns how many went.
   * `batch` is flat: data, port, address, data, port, address, ...; its buffers may be reused on return, as with send.
   */
  sendMany(batch: (Uint8Array | number | string)[]): number;
  /** Receives datagrams; `data` is only valid during the call. */
  onDatagram(handler: Receive): void;
  /**
   * Where the runtime waits for datagrams on the main thread itself (Bun on Linux), it steps aside
   * while `busy()` holds (or any other probe given): work that the event loop does on its own time
   * waits (packets the TUN reader handed over, a CSTP writer's retry timer, a DTLS setup nudge).
   */
  stepAsideWhile?(busy: () => boolean): void;
  /**
   * Where the runtime waits for datagrams on the main thread itself, it sleeps on `source` too and
   * reads it while it holds it (the TUN device: a reply reaching it while the thread sleeps skips
   * the reader thread's hand-over).
   */
  alsoWaitFor?(source: HeldDescriptor): void;
  /**
   * Where the runtime waits for datagrams on the main thread itself, it takes the TCP socket `fd`
   * from the runtime's event loop and watches it in that wait, which then runs as long as any is
   * watched: `owner.streamReadable()` runs on the main thread whenever the socket has bytes (or an
   * error) for the gateway to read itself (front/tls13-stream-reader.ts). The watch's id, or 0 when
   * it cannot: the runtime keeps the socket.
   */
  takeStream?(fd: number, owner: StreamOwner): number;
  /**
   * Stops watching (takeStream's id and socket). Call it before the socket is closed, or with
   * `closed` once the runtime has closed it (its descriptor's number may then be another socket's).
   */
  releaseStream?(id: number, fd: number, closed: boolean): void;
  /**
   * How the socket's datagrams moved since it opened, path by path (gw's memory report logs them):
   * each runtime names the paths it has (snake_case names, counts).
   */
  counters?(): UdpCounters;
  close(): void;
}

/** Counts by path (UdpSocket.counters): e.g. `received_wait`, `sent_gso_datagrams`. */
export type UdpCounters = Readonly<Record<string, number>>;

/** Who hears that a taken TCP socket is readable (UdpSocket.takeStream): a method, no closure per socket. */
export interface StreamOwner {
  streamReadable(): void;
}

/** Error codes: udp_port_in_use, udp_forbidden, udp_failed. */
export type OpenUdp = (host: string, port: number) => Promise<Result<UdpSocket>>;

/**
 * A UdpSocket over a bound UDP fd handed by the main process (error code udp_adopt_unsupported where
 * the runtime cannot). `log` hears what goes wrong later (a reader of the runtime's own that stops).
 */
export type AdoptUdp = (fd: number, log?: Log) => Promise<Result<UdpSocket>>;
