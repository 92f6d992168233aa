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
}

/** The raw side of a connected TLS socket; undefined when the runtime cannot reach it. */
export type OpenRawTcp = (socket: TLSSocket) => RawTcp | undefined;
