/**
 * Linux UDP GSO (UDP_SEGMENT) sends one buffer as many datagrams of gso_size bytes, the last one
 * possibly shorter. These are the kernel's limits for one such send and the rule that picks,
 * from a flat sendMany batch (data, port, address, ...), the datagrams that can go together.
 */

/** UDP_MAX_SEGMENTS was 64 when UDP GSO appeared (4.18); newer kernels allow 128. 64 is safe on every kernel. */
export const GSO_MAX_SEGMENTS = 64;
/** The IP total length (16 bits) less the IPv4 and UDP headers: the most payload one send may carry. */
export const GSO_MAX_PAYLOAD = 65_535 - 20 - 8;

/**
 * How many datagrams, from datagram index `start`, form one GSO run: consecutive entries to the
 * same port and address, every one as long as the first, except that the run's last may be
 * shorter (then it ends the run). Never more than the kernel's limits; 1 means "no run here".
 * Empty datagrams never join a run (a zero gso_size or an empty last segment would lose them).
 */
export function gsoRunLength(batch: readonly (Uint8Array | number | string)[], start: number): number {
  const count = (batch.length / 3) | 0;
  const at = start * 3;
  const first = (batch[at] as Uint8Array).byteLength;
  if (first === 0) return 1;
  const port = batch[at + 1];
  const address = batch[at + 2];
  const most = Math.min(GSO_MAX_SEGMENTS, ((GSO_MAX_PAYLOAD / first) | 0), count - start);
  let run = 1;
  while (run < most) {
    const next = at + run * 3;
    if (batch[next + 1] !== port || batch[next + 2] !== address) break;
    const length = (batch[next] as Uint8Array).byteLength;
    if (length === 0 || length > first) break;
    run++;
    if (length < first) break; // a shorter datagram can only be the last
  }
  return run;
}
