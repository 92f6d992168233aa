/**
 * A hand-built IPv4 ICMP echo request (20-byte header, 8-byte ICMP header, 16 bytes of payload)
 * from the session's tunnel address, and the check that a packet is its reply.
 */
const IP_HEADER = 20;
const ICMP_HEADER = 8;
const PAYLOAD = 16;

export function echoRequest(source: Uint8Array, target: Uint8Array, id: number, seq: number): Uint8Array {
  const p = new Uint8Array(IP_HEADER + ICMP_HEADER + PAYLOAD);
  p[0] = 0x45; // version 4, header 5 words
  p[2] = p.length >>> 8;
  p[3] = p.length & 0xff;
  p[4] = id >>> 8; // IP identification: reuse the echo id
  p[5] = id & 0xff;
  p[8] = 64; // TTL
  p[9] = 1; // ICMP
  p.set(source, 12);
  p.set(target, 16);
  writeChecksum(p, 0, IP_HEADER, 10);
  const icmp = IP_HEADER;
  p[icmp] = 8; // echo request
  p[icmp + 4] = id >>> 8;
  p[icmp + 5] = id & 0xff;
  p[icmp + 6] = seq >>> 8;
  p[icmp + 7] = seq & 0xff;
  for (let i = 0; i < PAYLOAD; i++) p[icmp + ICMP_HEADER + i] = (seq + i) & 0xff;
  writeChecksum(p, icmp, p.length, icmp + 2);
  return p;
}

/** Is `packet` the echo reply from `target` to `source` for (id, seq), with a correct checksum? */
export function isEchoReply(packet: Uint8Array, source: Uint8Array, target: Uint8Array, id: number, seq: number): boolean {
  if (packet.length < IP_HEADER + ICMP_HEADER || packet[0]! >> 4 !== 4 || packet[9] !== 1) return false;
  const ihl = (packet[0]! & 0x0f) * 4;
  if (packet.length < ihl + ICMP_HEADER) return false;
  for (let i = 0; i < 4; i++) if (packet[12 + i] !== target[i] || packet[16 + i] !== source[i]) return false;
  const icmp = ihl;
  if (packet[icmp] !== 0 || packet[icmp + 1] !== 0) return false;
  if (((packet[icmp + 4]! << 8) | packet[icmp + 5]!) !== id || ((packet[icmp + 6]! << 8) | packet[icmp + 7]!) !== seq) return false;
  return checksum(packet, icmp, packet.length) === 0;
}

function checksum(b: Uint8Array, start: number, end: number): number {
  let sum = 0;
  for (let i = start; i < end; i += 2) sum += (b[i]! << 8) | (i + 1 < end ? b[i + 1]! : 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

function writeChecksum(b: Uint8Array, start: number, end: number, at: number): void {
  b[at] = 0;
  b[at + 1] = 0;
  const c = checksum(b, start, end);
  b[at] = c >>> 8;
  b[at + 1] = c & 0xff;
}
