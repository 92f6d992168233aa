import type { UdpSocket } from "./udp.ts";

/** sendMany for a socket without a batch call: each datagram of the flat batch by `send`; returns how many went. */
export function sendEach(send: UdpSocket["send"], batch: (Uint8Array | number | string)[]): number {
  let sent = 0;
  for (let i = 0; i + 2 < batch.length; i += 3) if (send(batch[i] as Uint8Array, batch[i + 1] as number, batch[i + 2] as string)) sent++;
  return sent;
}
