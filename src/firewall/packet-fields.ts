/** The transport fields the firewall reads from an IPv4 packet (caller checked isIpv4Packet). No objects. */

export const ipv4Protocol = (p: Uint8Array): number => p[9]!;
export const ipv4HeaderLength = (p: Uint8Array): number => (p[0]! & 0x0f) * 4;
/** Fragments after the first carry no transport header. */
export const isLaterFragment = (p: Uint8Array): boolean => (((p[6]! & 0x1f) << 8) | p[7]!) !== 0;

/** Bytes 0-1 after the IP header: the TCP/UDP source port, or the ICMP type and code. */
export function transportWord0(p: Uint8Array, ihl: number): number {
  return ihl + 2 <= p.length ? (p[ihl]! << 8) | p[ihl + 1]! : -1;
}

/** Bytes 2-3 after the IP header: the TCP/UDP destination port. */
export function transportWord1(p: Uint8Array, ihl: number): number {
  return ihl + 4 <= p.length ? (p[ihl + 2]! << 8) | p[ihl + 3]! : -1;
}

/** The ICMP echo identifier (bytes 4-5 of the ICMP header): the "port" of a ping flow. */
export function icmpEchoId(p: Uint8Array, ihl: number): number {
  return ihl + 6 <= p.length ? (p[ihl + 4]! << 8) | p[ihl + 5]! : -1;
}

/** ICMP types that quote an earlier packet (unreachable, source quench, redirect, time exceeded, parameter problem). */
export const isIcmpErrorType = (type: number): boolean => type === 3 || type === 4 || type === 5 || type === 11 || type === 12;
export const isIcmpEchoType = (type: number): boolean => type === 8 || type === 0;
