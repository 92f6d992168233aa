/** The few IP header fields the data path reads, straight from the bytes (no parsing objects). */

export function ipVersion(packet: Uint8Array): number {
  return packet.length > 0 ? packet[0]! >> 4 : 0;
}

/** IPv4 source address as an unsigned 32-bit number (caller checked length >= 20). */
export function ipv4Source(packet: Uint8Array): number {
  return ((packet[12]! << 24) | (packet[13]! << 16) | (packet[14]! << 8) | packet[15]!) >>> 0;
}

export function ipv4Destination(packet: Uint8Array): number {
  return ((packet[16]! << 24) | (packet[17]! << 16) | (packet[18]! << 8) | packet[19]!) >>> 0;
}

/** A well-formed IPv4 header: version 4, IHL >= 5, total length within the buffer. */
export function isIpv4Packet(packet: Uint8Array): boolean {
  if (packet.length < 20 || packet[0]! >> 4 !== 4 || (packet[0]! & 0x0f) < 5) return false;
  const total = (packet[2]! << 8) | packet[3]!;
  return total >= 20 && total <= packet.length;
}

/** A well-formed IPv6 header: version 6, the 40-byte fixed header and its payload within the buffer. */
export function isIpv6Packet(packet: Uint8Array): boolean {
  if (packet.length < 40 || packet[0]! >> 4 !== 6) return false;
  return 40 + ((packet[4]! << 8) | packet[5]!) <= packet.length;
}

/** Word `index` (0-3) of the IPv6 source address (caller checked isIpv6Packet). */
export function ipv6SourceWord(packet: Uint8Array, index: number): number {
  return readWord(packet, 8 + index * 4);
}

/** Word `index` (0-3) of the IPv6 destination address (caller checked isIpv6Packet). */
export function ipv6DestinationWord(packet: Uint8Array, index: number): number {
  return readWord(packet, 24 + index * 4);
}

function readWord(p: Uint8Array, at: number): number {
  return ((p[at]! << 24) | (p[at + 1]! << 16) | (p[at + 2]! << 8) | p[at + 3]!) >>> 0;
}
