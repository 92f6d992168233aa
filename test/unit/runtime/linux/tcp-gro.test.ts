import { describe, expect, test } from "bun:test";
import { TcpGro } from "../../../../src/runtime/linux/tcp-gro.ts";
import { VNET_F_NEEDS_CSUM, VNET_GSO_NONE, VNET_GSO_TCPV4, VNET_GSO_TCPV6, VNET_HDR_BYTES } from "../../../../src/runtime/linux/virtio-net-hdr.ts";

// Packets are built with complete, correct checksums; each frame the coalescer writes is cut back
// into packets the way the kernel's TCP segmentation does (seed adjusted per segment, then the
// checksum completed over the segment), and compared with what went in, byte for byte.

const ACK = 0x10;
const PSH = 0x08;
const FIN = 0x01;

interface Tcp {
  v6?: boolean;
  src?: number;
  dport?: number;
  seq: number;
  ack?: number;
  flags?: number;
  payload: number;
  ttl?: number;
  id?: number;
  options?: number[];
  window?: number;
}

function sum16(bytes: Uint8Array, start: number, length: number, extra = 0): number {
  let sum = extra;
  let k = start;
  for (; k + 1 < start + length; k += 2) sum += (bytes[k]! << 8) | bytes[k + 1]!;
  if (k < start + length) sum += bytes[k]! << 8;
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return sum;
}

function tcpPacket(o: Tcp): Uint8Array {
  const ip = o.v6 ? 40 : 20;
  const options = o.options ?? [];
  const th = 20 + options.length;
  const p = new Uint8Array(ip + th + o.payload);
  const v = new DataView(p.buffer);
  if (o.v6) {
    p[0] = 0x60;
    v.setUint16(4, th + o.payload);
    p[6] = 6;
    p[7] = o.ttl ?? 64;
    p.set([0x20, 0x01, 0x0d, 0xb8, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, o.src ?? 2], 8);
    p.set([0x20, 0x01, 0x0d, 0xb8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2], 24);
  } else {
    p[0] = 0x45;
    v.setUint16(2, p.length);
    v.setUint16(4, o.id ?? 100);
    p[6] = 0x40; // DF
    p[8] = o.ttl ?? 64;
    p[9] = 6;
    p.set([10, 10, 0, o.src ?? 2, 198, 51, 100, 2], 12);
    v.setUint16(10, ~sum16(p, 0, 20) & 0xffff);
  }
  v.setUint16(ip, 40000);
  v.setUint16(ip + 2, o.dport ?? 5201);
  v.setUint32(ip + 4, o.seq >>> 0);
  v.setUint32(ip + 8, o.ack ?? 777);
  p[ip + 12] = (th / 4) << 4;
  p[ip + 13] = o.flags ?? ACK;
  v.setUint16(ip + 14, o.window ?? 501);
  p.set(options, ip + 20);
  for (let k = 0; k < o.payload; k++) p[ip + th + k] = (o.seq + k) & 0xff;
  v.setUint16(ip + 16, ~sum16(p, ip, th + o.payload, pseudo(p, o.v6 ?? false, th + o.payload)) & 0xffff);
  return p;
}

function pseudo(p: Uint8Array, v6: boolean, tcpLength: number): number {
  return v6 ? sum16(p, 8, 32, 6 + tcpLength) : sum16(p, 12, 8, 6 + tcpLength);
}

/** The kernel's side: a frame back into the packets it stands for. */
function segment(frame: Uint8Array): Uint8Array[] {
  const hdr = new DataView(frame.buffer, frame.byteOffset, VNET_HDR_BYTES);
  const packet = frame.subarray(VNET_HDR_BYTES);
  const gsoType = hdr.getUint8(1);
  if (gsoType === VNET_GSO_NONE) {
    expect(hdr.getUint8(0)).toBe(0);
    return [packet.slice()];
  }
  expect(hdr.getUint8(0)).toBe(VNET_F_NEEDS_CSUM);
  const v6 = gsoType === VNET_GSO_TCPV6;
  expect(gsoType).toBe(v6 ? VNET_GSO_TCPV6 : VNET_GSO_TCPV4);
  const hdrLen = hdr.getUint16(2, true);
  const gso = hdr.getUint16(4, true);
  const ip = hdr.getUint16(6, true);
  expect(hdr.getUint16(8, true)).toBe(16);
  const tcpLenAll = packet.length - ip;
  const seed = (packet[ip + 16]! << 8) | packet[ip + 17]!;
  if (!v6) {
    // The merged IPv4 header is itself complete.
    expect(sum16(packet, 0, 20)).toBe(0xffff);
    expect((packet[2]! << 8) | packet[3]!).toBe(packet.length);
  } else expect(((packet[4]! << 8) | packet[5]!) + 40).toBe(packet.length);
  const out: Uint8Array[] = [];
  const seq0 = new DataView(packet.buffer, packet.byteOffset).getUint32(ip + 4);
  const id0 = (packet[4]! << 8) | packet[5]!;
  const payloadAll = packet.length - hdrLen;
  for (let off = 0, k = 0; off < payloadAll; off += gso, k++) {
    const size = Math.min(gso, payloadAll - off);
    const seg = new Uint8Array(hdrLen + size);
    seg.set(packet.subarray(0, hdrLen));
    seg.set(packet.subarray(hdrLen + off, hdrLen + off + size), hdrLen);
    const v = new DataView(seg.buffer);
    const last = off + size >= payloadAll;
    if (!last) seg[ip + 13]! &= ~(PSH | FIN);
    v.setUint32(ip + 4, (seq0 + off) >>> 0);
    if (v6) v.setUint16(4, seg.length - 40);
    else {
      v.setUint16(2, seg.length);
      v.setUint16(4, (id0 + k) & 0xffff);
      v.setUint16(10, 0);
      v.setUint16(10, ~sum16(seg, 0, 20) & 0xffff);
    }
    // The seed, adjusted from the whole length to the segment's, then the checksum completed.
    const tcpLen = seg.length - ip;
    const adjusted = sum16(new Uint8Array(0), 0, 0, seed + (~tcpLenAll & 0xffff) + tcpLen);
    v.setUint16(ip + 16, adjusted);
    v.setUint16(ip + 16, ~sum16(seg, ip, tcpLen) & 0xffff);
    out.push(seg);
  }
  return out;
}

function run(packets: Uint8Array[], accept: (frame: Uint8Array, index: number) => boolean = () => true) {
  const frames: Uint8Array[] = [];
  const written = new TcpGro().write(packets, (frame) => {
    const ok = accept(frame, frames.length);
    frames.push(frame.slice());
    return ok;
  });
  return { frames, written, packets: frames.flatMap(segment), kinds: frames.map((f) => f[1]) };
}

const stream = (count: number, size: number, o: Partial<Tcp> = {}, start = 1000) =>
  Array.from({ length: count }, (_, k) => tcpPacket({ seq: start + k * size, payload: size, id: 100 + k, ...o }));

describe("TcpGro (user-space GRO for a TUN with IFF_VNET_HDR)", () => {
  test("a run of one stream becomes one GSO frame that cuts back into the same packets", () => {
    const packets = [...stream(9, 1000), tcpPacket({ seq: 1000 + 9 * 1000, payload: 500, id: 109, flags: ACK | PSH })];
    const r = run(packets);
    expect(r.frames.length).toBe(1);
    expect(r.kinds).toEqual([VNET_GSO_TCPV4]);
    expect(r.written).toBe(10);
    expect(r.packets).toEqual(packets);
  });

  test("interleaved streams merge each on its own and keep each stream's order", () => {
    const a = stream(4, 1200, { src: 2 });
    const b = stream(4, 1200, { src: 3 }, 50_000);
    const mixed = [a[0]!, b[0]!, a[1]!, b[1]!, b[2]!, a[2]!, a[3]!, b[3]!];
    const r = run(mixed);
    expect(r.frames.length).toBe(2);
    expect(r.packets).toEqual([...a, ...b]);
  });

  test("a packet of the stream that cannot join ends the run, and the stream's order holds", () => {
    const a = stream(6, 1000);
    const pureAck = tcpPacket({ seq: 4000, payload: 0, id: 50 });
    const packets = [a[0]!, a[1]!, a[2]!, pureAck, a[3]!, a[4]!, a[5]!];
    const r = run(packets);
    expect(r.frames.length).toBe(3);
    expect(r.packets).toEqual(packets);
    expect(r.written).toBe(7);
  });

  test("PSH and a shorter segment close a run; a gap in the sequence starts a new one", () => {
    const p1 = tcpPacket({ seq: 0, payload: 1000, id: 1 });
    const p2 = tcpPacket({ seq: 1000, payload: 1000, id: 2, flags: ACK | PSH });
    const p3 = tcpPacket({ seq: 2000, payload: 1000, id: 3 });
    const p4 = tcpPacket({ seq: 3000, payload: 400, id: 4 });
    const p5 = tcpPacket({ seq: 3400, payload: 1000, id: 5 });
    const p6 = tcpPacket({ seq: 9999, payload: 1000, id: 6 });
    const r = run([p1, p2, p3, p4, p5, p6]);
    expect(r.frames.length).toBe(4); // [p1 p2] [p3 p4] [p5] [p6]
    expect(r.kinds).toEqual([VNET_GSO_TCPV4, VNET_GSO_TCPV4, VNET_GSO_NONE, VNET_GSO_NONE]);
    expect(r.packets).toEqual([p1, p2, p3, p4, p5, p6]);
  });

  test("different TTL, window, ACK number or options keep packets apart; equal options merge", () => {
    const base = { payload: 800 };
    for (const change of [{ ttl: 63 }, { window: 900 }, { ack: 778 }, { options: [1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 1] }]) {
      const r = run([tcpPacket({ ...base, seq: 0, id: 1 }), tcpPacket({ ...base, seq: 800, id: 2, ...change })]);
      expect(r.frames.length).toBe(2);
    }
    const ts = [1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 1];
    const same = [tcpPacket({ ...base, seq: 0, id: 1, options: ts }), tcpPacket({ ...base, seq: 800, id: 2, options: ts })];
    const r = run(same);
    expect(r.frames.length).toBe(1);
    expect(r.packets).toEqual(same);
  });

  test("UDP, ICMP, SYN, FIN and fragments go as they came, in place among the rest", () => {
    const udp = new Uint8Array(48);
    udp.set([0x45, 0, 0, 48, 0, 1, 0x40, 0, 64, 17]);
    const frag = tcpPacket({ seq: 0, payload: 100 });
    frag[6] = 0x20; // more fragments
    const syn = tcpPacket({ seq: 0, payload: 0, flags: 0x02 });
    const fin = tcpPacket({ seq: 5, payload: 10, flags: ACK | FIN });
    const r = run([udp, frag, syn, fin]);
    expect(r.frames.length).toBe(4);
    expect(r.kinds).toEqual([0, 0, 0, 0]);
    expect(r.packets).toEqual([udp, frag, syn, fin]);
  });

  test("an IPv6 stream merges into a TCPV6 frame that cuts back into the same packets", () => {
    const packets = stream(12, 1220, { v6: true });
    const r = run(packets);
    expect(r.kinds).toEqual([VNET_GSO_TCPV6]);
    expect(r.packets).toEqual(packets);
  });

  test("a frame never passes 64 KiB: a long run is split", () => {
    const packets = stream(100, 1400);
    const r = run(packets);
    expect(r.frames.length).toBe(3);
    for (const frame of r.frames) expect(frame.length - VNET_HDR_BYTES).toBeLessThanOrEqual(65535);
    expect(r.packets).toEqual(packets);
  });

  test("a refused frame counts all its packets as not written", () => {
    const packets = [...stream(5, 1000), tcpPacket({ seq: 0, payload: 10, flags: 0x02 })];
    const r = run(packets, (_frame, index) => index !== 0);
    expect(r.written).toBe(1);
  });

  test("sequence numbers that wrap past 2^32 still follow", () => {
    const packets = stream(4, 1000, {}, 0xffffffff - 1500);
    const r = run(packets.map((p) => p));
    expect(r.frames.length).toBe(1);
    expect(r.packets).toEqual(packets);
  });
});
