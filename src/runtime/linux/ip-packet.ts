/** What the TUN's user-space offloads (tcp-gro.ts, tcp-segmenter.ts) read and write in IP and TCP headers. */

export const PROTO_TCP = 6;
/** TCP header flags (byte 13). */
export const TCP_FIN = 0x01;
export const TCP_SYN = 0x02;
export const TCP_RST = 0x04;
export const TCP_PSH = 0x08;
export const TCP_ACK = 0x10;
export const TCP_URG = 0x20;
export const TCP_ECE = 0x40;
export const TCP_CWR = 0x80;

/**
 * The 16-bit ones'-complement sum (RFC 1071) of `length` bytes at `start`, plus `extra`, folded
 * but not inverted; an odd last byte counts as the high half of a word. Below 64 KiB of data the
 * running sum stays under 2^32.
 */
export function onesSum(bytes: Uint8Array, start: number, length: number, extra: number): number {
  let sum = extra;
  const end = start + length;
  let k = start;
  for (; k + 1 < end; k += 2) sum += (bytes[k]! << 8) | bytes[k + 1]!;
  if (k < end) sum += bytes[k]! << 8;
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return sum;
}

/** Big-endian (network order) fields. */
export const get16 = (from: Uint8Array, at: number): number => (from[at]! << 8) | from[at + 1]!;
export const get32 = (from: Uint8Array, at: number): number => ((from[at]! << 24) | (from[at + 1]! << 16) | (from[at + 2]! << 8) | from[at + 3]!) >>> 0;

export function put16(into: Uint8Array, at: number, value: number): void {
  into[at] = (value >>> 8) & 0xff;
  into[at + 1] = value & 0xff;
}

export function put32(into: Uint8Array, at: number, value: number): void {
  into[at] = value >>> 24;
  into[at + 1] = (value >>> 16) & 0xff;
  into[at + 2] = (value >>> 8) & 0xff;
  into[at + 3] = value & 0xff;
}
