/** ICMP destination unreachable, code 13: "communication administratively prohibited" (RFC 1812 5.2.7.1). */
export const ICMP_UNREACHABLE = 3;
export const ICMP_ADMIN_PROHIBITED = 13;

const OUTER_HEADER = 20;
const ICMP_HEADER = 8;
/** Largest reply: outer header, ICMP header, the original header (IHL up to 60) and 8 bytes. */
export const ICMP_PROHIBITED_MAX = OUTER_HEADER + ICMP_HEADER + 60 + 8;

/**
 * Writes the reply to a denied IPv4 packet into `out` (at least ICMP_PROHIBITED_MAX bytes,
 * preallocated) and returns its length, or 0 when no reply is due (the original is an ICMP
 * error, a non-first fragment, or sent to a multicast or broadcast address: RFC 1122 3.2.2
 * forbids answering those, and the reply's source would be no host). The reply comes from
 * the denied destination and goes to the packet's source, quoting its header and 8 bytes.
 */
export function writeIcmpProhibited(original: Uint8Array, out: Uint8Array): number {
  const ihl = (original[0]! & 0x0f) * 4;
  const fragmentOffset = ((original[6]! & 0x1f) << 8) | original[7]!;
  if (fragmentOffset !== 0) return 0;
  if (original[16]! >= 224) return 0; // multicast 224/4, reserved 240/4, broadcast
  if (original[9] === 1 && isIcmpError(original[ihl])) return 0;
  const total = (original[2]! << 8) | original[3]!;
  const quoted = Math.min(total, ihl + 8, original.length);
  const length = OUTER_HEADER + ICMP_HEADER + quoted;

  out[0] = 0x45;
  out[1] = 0xc0; // DSCP CS6 (network control), as Linux sends its ICMP errors
  out[2] = length >> 8;
  out[3] = length & 0xff;
  out[4] = 0;
  out[5] = 0; // identification
  out[6] = 0;
  out[7] = 0; // no fragmentation flags
  out[8] = 64; // TTL
  out[9] = 1; // ICMP
  out[10] = 0;
  out[11] = 0;
  for (let i = 0; i < 4; i++) {
    out[12 + i] = original[16 + i]!; // from the denied destination
    out[16 + i] = original[12 + i]!; // to the sender
  }
  const ip = internetChecksum(out, 0, OUTER_HEADER);
  out[10] = ip >> 8;
  out[11] = ip & 0xff;

  const icmp = OUTER_HEADER;
  out[icmp] = ICMP_UNREACHABLE;
  out[icmp + 1] = ICMP_ADMIN_PROHIBITED;
  out[icmp + 2] = 0;
  out[icmp + 3] = 0;
  out[icmp + 4] = 0;
  out[icmp + 5] = 0;
  out[icmp + 6] = 0;
  out[icmp + 7] = 0;
  out.set(original.subarray(0, quoted), icmp + ICMP_HEADER);
  const sum = internetChecksum(out, icmp, ICMP_HEADER + quoted);
  out[icmp + 2] = sum >> 8;
  out[icmp + 3] = sum & 0xff;
  return length;
}

/** Destination unreachable, source quench, redirect, time exceeded, parameter problem. */
function isIcmpError(type: number | undefined): boolean {
  return type === 3 || type === 4 || type === 5 || type === 11 || type === 12;
}

/** RFC 1071 ones' complement sum over bytes [start, start + length). */
export function internetChecksum(bytes: Uint8Array, start: number, length: number): number {
  let sum = 0;
  const end = start + length;
  let i = start;
  for (; i + 1 < end; i += 2) sum += (bytes[i]! << 8) | bytes[i + 1]!;
  if (i < end) sum += bytes[i]! << 8;
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}
