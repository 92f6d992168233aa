/**
 * The IPv4 packets the worker-kernel test writes through an adopted TUN queue and reads from it:
 * an ICMP echo request (the kernel answers it), UDP datagrams, and a parser for what comes back.
 */
import { internetChecksum } from "../../src/firewall/icmp-prohibited.ts";

/** The echo requests' identifier, to tell their replies from anything else. */
export const ECHO_IDENT = 0x6777;
const ICMP = 1;
const UDP = 17;

function ipv4(protocol: number, source: number[], destination: number[], payload: Uint8Array, id: number): Uint8Array {
  const packet = new Uint8Array(20 + payload.length);
  packet[0] = 0x45;
  packet[2] = packet.length >> 8;
  packet[3] = packet.length & 0xff;
  packet[4] = id >> 8;
  packet[5] = id & 0xff;
  packet[8] = 64; // TTL
  packet[9] = protocol;
  packet.set(source, 12);
  packet.set(destination, 16);
  const sum = internetChecksum(packet, 0, 20);
  packet[10] = sum >> 8;
  packet[11] = sum & 0xff;
  packet.set(payload, 20);
  return packet;
}

/** An ICMP echo request with this identifier and sequence number. */
export function echoRequest(source: number[], destination: number[], ident: number, sequence: number): Uint8Array {
  const icmp = new Uint8Array(8 + 16);
  icmp[0] = 8; // echo request
  icmp[4] = ident >> 8;
  icmp[5] = ident & 0xff;
  icmp[6] = sequence >> 8;
  icmp[7] = sequence & 0xff;
  icmp.set(new TextEncoder().encode("gwk echo payload"), 8);
  const sum = internetChecksum(icmp, 0, icmp.length);
  icmp[2] = sum >> 8;
  icmp[3] = sum & 0xff;
  return ipv4(ICMP, source, destination, icmp, sequence);
}

/** A UDP datagram without checksum (0: allowed over IPv4). */
export function udpPacket(source: number[], sourcePort: number, destination: number[], port: number, text: string): Uint8Array {
  const data = new TextEncoder().encode(text);
  const udp = new Uint8Array(8 + data.length);
  udp[0] = sourcePort >> 8;
  udp[1] = sourcePort & 0xff;
  udp[2] = port >> 8;
  udp[3] = port & 0xff;
  udp[4] = udp.length >> 8;
  udp[5] = udp.length & 0xff;
  udp.set(data, 8);
  return ipv4(UDP, source, destination, udp, 1);
}

export type ParsedPacket =
  | { kind: "udp"; source: string; destination: string; text: string }
  | { kind: "echo-reply"; source: string; destination: string; ident: number; sequence: number }
  | { kind: "other" };

export function parsePacket(p: Uint8Array): ParsedPacket {
  if (p.length < 20 || p[0]! >> 4 !== 4) return { kind: "other" };
  const header = (p[0]! & 0x0f) * 4;
  const source = Array.from(p.subarray(12, 16)).join(".");
  const destination = Array.from(p.subarray(16, 20)).join(".");
  if (p[9] === UDP && p.length >= header + 8) {
    return { kind: "udp", source, destination, text: new TextDecoder().decode(p.subarray(header + 8)) };
  }
  if (p[9] === ICMP && p[header] === 0 && p.length >= header + 8) {
    return { kind: "echo-reply", source, destination, ident: (p[header + 4]! << 8) | p[header + 5]!, sequence: (p[header + 6]! << 8) | p[header + 7]! };
  }
  return { kind: "other" };
}
