/** The memory wake-cost.ts's relay shares between its reader thread and the main thread: one datagram. */

export interface RelayStart {
  port: number;
  shared: SharedArrayBuffer;
}

/** Word indexes: the slot's state, the datagram's length, and how many datagrams were handed over. */
export const STATE = 0;
export const LENGTH = 1;
export const HANDED = 2;
export const FREE = 0;
export const FULL = 1;

const FROM_AT = 16;
const DATA_AT = 32;
const DATA_BYTES = 2048;

export const relayShared = () => new SharedArrayBuffer(DATA_AT + DATA_BYTES);

export function relayView(shared: SharedArrayBuffer) {
  return {
    words: new Int32Array(shared, 0, 3),
    /** The sender's sockaddr_in, as recvfrom wrote it. */
    from: new Uint8Array(shared, FROM_AT, 16),
    data: new Uint8Array(shared, DATA_AT, DATA_BYTES),
  };
}
