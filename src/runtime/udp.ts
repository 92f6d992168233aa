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
  close(): void;
}

/** Error codes: udp_port_in_use, udp_forbidden, udp_failed. */
export type OpenUdp = (host: string, port: number) => Promise<Result<UdpSocket>>;

/**
 * A UdpSocket over a bound UDP fd handed by the main process (error code udp_adopt_unsupported where
 * the runtime cannot). `log` hears what goes wrong later (a reader of the runtime's own that stops).
 */
export type AdoptUdp = (fd: number, log?: Log) => Promise<Result<UdpSocket>>;
