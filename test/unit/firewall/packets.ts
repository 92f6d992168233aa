import { parseIpv4 } from "../../../src/net/ipv4.ts";

/** A minimal IPv4 packet: 20-byte header, then the transport bytes given. */
export function ipv4Packet(proto: number, src: string, dst: string, transport: number[]): Uint8Array {
  const p = new Uint8Array(20 + transport.length);
  const total = p.length;
  p[0] = 0x45;
  p[2] = total >> 8;
  p[3] = total & 0xff;
  p[4] = 0x12;
  p[5] = 0x34;
  p[8] = 64;
  p[9] = proto;
  new DataView(p.buffer).setUint32(12, parseIpv4(src)!);
  new DataView(p.buffer).setUint32(16, parseIpv4(dst)!);
  p.set(transport, 20);
  return p;
}

export const tcp = (src: string, dst: string, sport: number, dport: number) =>
  ipv4Packet(6, src, dst, [sport >> 8, sport & 255, dport >> 8, dport & 255, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0]);
export const udp = (src: string, dst: string, sport: number, dport: number) => ipv4Packet(17, src, dst, [sport >> 8, sport & 255, dport >> 8, dport & 255, 0, 8, 0, 0]);
export const ping = (src: string, dst: string, type: number, id: number) => ipv4Packet(1, src, dst, [type, 0, 0, 0, id >> 8, id & 255, 0, 1]);
