import type { TLSSocket } from "node:tls";

/**
 * The TCP socket under a TLS socket, written directly: the gateway's own TLS 1.3 records
 * (front/tls13-record-writer.ts) go out in one send per batch, past the TLS library.
 */
export interface RawTcp {
  /**
   * Sends what the kernel takes now, without waiting: the bytes taken (fewer than given, or 0,
   * when its buffer is full), or -1 when the connection failed (reset, closed).
   */
  send(data: Uint8Array): number;
  /** The socket's descriptor (the runtime's: it polls and closes it). */
  readonly fd: number;
  /**
   * Reads what the kernel has, at most `length` bytes into `buffer` from `offset`, without waiting:
   * the bytes read, 0 at the client's end of stream, RAW_TCP_NOTHING when there is nothing now,
   * RAW_TCP_FAILED when the connection failed (reset) or the runtime closed the socket. Only for a
   * socket whose reading the gateway took from the TLS library (UdpSocket.takeStream).
   */
  recv(buffer: Uint8Array, offset: number, length: number): number;
}

export const RAW_TCP_NOTHING = -1;
export const RAW_TCP_FAILED = -2;

/** The raw side of a connected TLS socket; undefined when the runtime cannot reach it. */
export type OpenRawTcp = (socket: TLSSocket) => RawTcp | undefined;
