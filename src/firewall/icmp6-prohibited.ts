/** ICMPv6 destination unreachable, code 1: "communication with destination administratively prohibited" (RFC 4443 3.1). */
export const ICMP6_UNREACHABLE = 1;
export const ICMP6_ADMIN_PROHIBITED = 1;

const IPV6_HEADER = 40;
const ICMP6_HEADER = 8;
const ICMPV6 = 58;
/** An ICMPv6 error quotes as much of the packet as fits in the minimum IPv6 MTU (RFC 4443 2.4 c). */
export const ICMP6_PROHIBITED_MAX = 1280;

/**
 * Writes the reply to a denied IPv6 packet into `out` (at least ICMP6_PROHIBITED_MAX bytes,
 * preallocated) and returns its length, or 0 when no reply is due (the original is itself an
 * ICMPv6 error, RFC 4443 2.4 e, or sent to a multicast address, 2.4 e.3). The reply comes from the denied destination and goes to the
 * packet's source. Called for TCP/UDP packets the policy denied (caller checked isIpv6Packet).
 */
export function writeIcmp6Prohibited(original: Uint8Array, out: Uint8Array): number {
  if (original[6] === ICMPV6 && original.length > IPV6_HEADER && original[IPV6_HEADER]! < 128) return 0;
  if (original[24] === 0xff) return 0; // ff00::/8
  const total = IPV6_HEADER + ((original[4]! << 8) | original[5]!);
  const quoted = Math.min(total, original.length, ICMP6_PROHIBITED_MAX - IPV6_HEADER - ICMP6_HEADER);
  const payload = ICMP6_HEADER + quoted;

  out[0] = 0x60;
  out[1] = 0; // traffic class and flow label
  out[2] = 0;
  out[3] = 0;
  out[4] = payload >> 8;
  out[5] = payload & 0xff;
  out[6] = ICMPV6;
  out[7] = 64; // hop limit
  for (let i = 0; i < 16; i++) {
    out[8 + i] = original[24 + i]!; // from the denied destination
    out[24 + i] = original[8 + i]!; // to the sender
  }
  const icmp = IPV6_HEADER;
  out[icmp] = ICMP6_UNREACHABLE;
  out[icmp + 1] = ICMP6_ADMIN_PROHIBITED;
  for (let i = 2; i < ICMP6_HEADER; i++) out[icmp + i] = 0; // checksum (for now) and the unused word
  out.set(original.subarray(0, quoted), icmp + ICMP6_HEADER);
  const sum = icmp6Checksum(out, payload);
  out[icmp + 2] = sum >> 8;
  out[icmp + 3] = sum & 0xff;
  return IPV6_HEADER + payload;
}

/**
 * The ICMPv6 checksum of the message after the 40-byte header of `packet`: the ones' complement
 * sum over the pseudo-header (source, destination, upper-layer length, next header 58) and the
 * message (RFC 8200 8.1). A message with a correct checksum in place gives 0.
 */
export function icmp6Checksum(packet: Uint8Array, messageLength: number): number {
  let sum = (messageLength >>> 16) + (messageLength & 0xffff) + ICMPV6;
  for (let i = 8; i < IPV6_HEADER; i += 2) sum += (packet[i]! << 8) | packet[i + 1]!;
  const end = IPV6_HEADER + messageLength;
  let i = IPV6_HEADER;
  for (; i + 1 < end; i += 2) sum += (packet[i]! << 8) | packet[i + 1]!;
  if (i < end) sum += packet[i]! << 8;
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}
