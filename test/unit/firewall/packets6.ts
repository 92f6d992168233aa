import { parseIpv6 } from "../../../src/net/ipv6.ts";

/**
 * A minimal IPv6 packet: the 40-byte header, the extension headers given (each [type, bytes]
 * with its first byte, the next header, filled in here), then the transport bytes.
 */
export function ipv6Packet(proto: number, src: string, dst: string, transport: number[], extensions: [number, number[]][] = []): Uint8Array {
  const extBytes = extensions.reduce((n, [, b]) => n + b.length, 0);
  const p = new Uint8Array(40 + extBytes + transport.length);
  const payload = p.length - 40;
  p[0] = 0x60;
  p[4] = payload >> 8;
  p[5] = payload & 0xff;
  p[6] = extensions.length > 0 ? extensions[0]![0] : proto;
  p[7] = 64;
  const dv = new DataView(p.buffer);
  const s = parseIpv6(src)!;
  const d = parseIpv6(dst)!;
  for (let w = 0; w < 4; w++) {
    dv.setUint32(8 + w * 4, s[w]!);
    dv.setUint32(24 + w * 4, d[w]!);
  }
  let at = 40;
  extensions.forEach(([, bytes], i) => {
    p.set(bytes, at);
    p[at] = i + 1 < extensions.length ? extensions[i + 1]![0] : proto;
    at += bytes.length;
  });
  p.set(transport, at);
  return p;
}

export const tcp6 = (src: string, dst: string, sport: number, dport: number, extensions: [number, number[]][] = []) =>
  ipv6Packet(6, src, dst, [sport >> 8, sport & 255, dport >> 8, dport & 255, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0], extensions);
export const udp6 = (src: string, dst: string, sport: number, dport: number, extensions: [number, number[]][] = []) =>
  ipv6Packet(17, src, dst, [sport >> 8, sport & 255, dport >> 8, dport & 255, 0, 8, 0, 0], extensions);
export const ping6 = (src: string, dst: string, type: number, id: number) => ipv6Packet(58, src, dst, [type, 0, 0, 0, id >> 8, id & 255, 0, 1]);

/** Extension headers: hop-by-hop / destination options of 8 bytes (PadN), a fragment header at an offset (in 8-byte units). */
export const HOP_BY_HOP: [number, number[]] = [0, [0, 0, 1, 4, 0, 0, 0, 0]];
export const DEST_OPTS_16: [number, number[]] = [60, [0, 1, 1, 12, ...new Array<number>(12).fill(0)]];
export const fragment = (offsetUnits: number, more: boolean): [number, number[]] => [44, [0, 0, (offsetUnits >> 5) & 0xff, ((offsetUnits << 3) & 0xf8) | (more ? 1 : 0), 0, 0, 0x12, 0x34]];
