import { describe, expect, test } from "bun:test";
import { TcpSegmenter } from "../../../src/runtime/linux/tcp-segmenter.ts";
import { VNET_F_NEEDS_CSUM, VNET_GSO_NONE, VNET_GSO_TCPV4, VNET_GSO_TCPV6, VNET_HDR_BYTES, writeVnetHeader } from "../../../src/runtime/linux/virtio-net-hdr.ts";

/** A plain RFC 1071 checksum, written apart from the segmenter's: the sum of a region with a valid checksum in it is 0xffff. */
function checksum(parts: Uint8Array[]): number {
  let sum = 0;
  for (const part of parts) {
    for (let i = 0; i < part.length; i += 2) sum += part[i]! * 256 + (part[i + 1] ?? 0);
  }
  while (sum > 0xffff) sum = (sum % 0x10000) + Math.floor(sum / 0x10000);
  return sum;
}

const be16 = (d: Uint8Array, at: number) => d[at]! * 256 + d[at + 1]!;
const be32 = (d: Uint8Array, at: number) => ((d[at]! << 24) | (d[at + 1]! << 16) | (d[at + 2]! << 8) | d[at + 3]!) >>> 0;

function pseudoHeader(packet: Uint8Array, v4: boolean, tcpLength: number): Uint8Array {
  if (v4) return Uint8Array.of(...packet.subarray(12, 20), 0, 6, tcpLength >> 8, tcpLength & 0xff);
  return Uint8Array.of(...packet.subarray(8, 40), 0, 0, tcpLength >> 8, tcpLength & 0xff, 0, 0, 0, 6);
}

const TCP_FIN = 0x01;
const TCP_PSH = 0x08;
const TCP_ACK = 0x10;
const TCP_CWR = 0x80;

/** One read as the kernel hands it with TSO: virtio-net header, IP and TCP headers (12 bytes of options), `payload`. */
function superPacket(v4: boolean, payload: Uint8Array, mss: number, tcpFlags: number, ecn = false): Uint8Array {
  const ipBytes = v4 ? 20 : 40;
  const tcpBytes = 32;
  const packet = new Uint8Array(VNET_HDR_BYTES + ipBytes + tcpBytes + payload.length);
  const ip = packet.subarray(VNET_HDR_BYTES);
  if (v4) {
    ip.set([0x45, 0, 0, 0, 0x12, 0x34, 0x40, 0, 64, 6, 0, 0, 198, 51, 100, 1, 10, 10, 0, 2]);
  } else {
    ip.set([0x60, 0, 0, 0, 0, 0, 6, 64]);
    ip.set([0x20, 0x01, 0x0d, 0xb8, 0, 1, ...new Array(9).fill(0), 1], 8);
    ip.set([0x20, 0x01, 0x0d, 0xb8, 0, 2, ...new Array(9).fill(0), 2], 24);
  }
  const tcp = ip.subarray(ipBytes);
  tcp.set([0x01, 0xbb, 0xc3, 0x50, 0xff, 0xff, 0xfc, 0x18, 0, 0, 0, 7, (tcpBytes / 4) << 4, tcpFlags, 0xff, 0xff]);
  tcp.set([1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2], 20); // NOP NOP timestamps
  tcp.set(payload, tcpBytes);
  // The kernel leaves the pseudo-header's sum in the checksum field; the segmenter recomputes it anyway.
  tcp[16] = 0xab;
  tcp[17] = 0xcd;
  const gsoType = (v4 ? VNET_GSO_TCPV4 : VNET_GSO_TCPV6) | (ecn ? 0x80 : 0);
  writeVnetHeader(packet, 0, VNET_F_NEEDS_CSUM, gsoType, ipBytes + tcpBytes, mss, ipBytes, 16);
  return packet;
}

function pattern(length: number): Uint8Array {
  return Uint8Array.from({ length }, (_, i) => (i * 7 + 3) & 0xff);
}

function expand(read: Uint8Array, segmenter = new TcpSegmenter()): { ok: boolean; out: Uint8Array[] } {
  const out: Uint8Array[] = [];
  const ok = segmenter.expand(read, 0, VNET_HDR_BYTES, read.length - VNET_HDR_BYTES, out);
  return { ok, out };
}

describe("TcpSegmenter: a TSO super-packet cut as the kernel would send it", () => {
  for (const v4 of [true, false]) {
    test(`IPv${v4 ? 4 : 6}: MSS-sized segments with their own lengths, sequence numbers, flags and valid checksums`, () => {
      const payload = pattern(5000);
      const { ok, out } = expand(superPacket(v4, payload, 1448, TCP_ACK | TCP_PSH | TCP_FIN | TCP_CWR, true));
      expect(ok).toBe(true);
      const ipBytes = v4 ? 20 : 40;
      expect(out.map((s) => s.length - ipBytes - 32)).toEqual([1448, 1448, 1448, 656]);
      const joined: number[] = [];
      out.forEach((segment, i) => {
        const tcp = segment.subarray(ipBytes);
        const tcpLength = segment.length - ipBytes;
        if (v4) {
          expect(be16(segment, 2)).toBe(segment.length);
          expect(be16(segment, 4)).toBe(0x1234 + i);
          expect(checksum([segment.subarray(0, 20)])).toBe(0xffff);
        } else {
          expect(be16(segment, 4)).toBe(tcpLength);
        }
        expect(be32(tcp, 4)).toBe((0xfffffc18 + i * 1448) >>> 0); // wraps past 2^32
        const last = i === out.length - 1;
        expect(tcp[13]! & TCP_FIN).toBe(last ? TCP_FIN : 0);
        expect(tcp[13]! & TCP_PSH).toBe(last ? TCP_PSH : 0);
        expect(tcp[13]! & TCP_CWR).toBe(i === 0 ? TCP_CWR : 0);
        expect(tcp[13]! & TCP_ACK).toBe(TCP_ACK);
        expect(Array.from(tcp.subarray(20, 32))).toEqual([1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2]);
        expect(checksum([pseudoHeader(segment, v4, tcpLength), tcp])).toBe(0xffff);
        joined.push(...tcp.subarray(32));
      });
      expect(joined).toEqual(Array.from(payload));
    });
  }

  test("segments of earlier reads stay intact while later reads of the same delivery are cut, also past the scratch's size", () => {
    const segmenter = new TcpSegmenter(4096);
    const first = expand(superPacket(true, pattern(3000), 1000, TCP_ACK), segmenter).out;
    const copies = first.map((s) => s.slice());
    const second = expand(superPacket(true, pattern(9000), 1000, TCP_ACK), segmenter).out;
    expect(first).toEqual(copies);
    expect(second).toHaveLength(9);
    segmenter.reset();
    expect(expand(superPacket(false, pattern(100), 1000, TCP_ACK), segmenter).out).toHaveLength(1);
  });

  test("a packet whose checksum was left to complete (no GSO) gets it, in place", () => {
    const payload = pattern(301);
    const read = superPacket(true, payload, 0, TCP_ACK);
    writeVnetHeader(read, 0, VNET_F_NEEDS_CSUM, VNET_GSO_NONE, 0, 0, 20, 16);
    const ip = read.subarray(VNET_HDR_BYTES);
    ip[2] = ip.length >> 8;
    ip[3] = ip.length & 0xff;
    // The kernel's partial value: the pseudo-header's folded sum, not complemented.
    const tcpLength = ip.length - 20;
    const partial = checksum([pseudoHeader(ip, true, tcpLength)]);
    ip[36] = partial >> 8;
    ip[37] = partial & 0xff;
    const { ok, out } = expand(read);
    expect(ok).toBe(true);
    expect(out).toHaveLength(1);
    expect(out[0]!.length).toBe(ip.length);
    expect(checksum([pseudoHeader(out[0]!, true, tcpLength), out[0]!.subarray(20)])).toBe(0xffff);
  });

  test("what it does not cut is refused, not passed on half done: UDP GSO, a non-TCP or short packet, a zero MSS", () => {
    const udpGso = superPacket(true, pattern(3000), 1000, TCP_ACK);
    udpGso[1] = 5; // VIRTIO_NET_HDR_GSO_UDP_L4
    expect(expand(udpGso).ok).toBe(false);
    const notTcp = superPacket(true, pattern(3000), 1000, TCP_ACK);
    notTcp[VNET_HDR_BYTES + 9] = 17;
    expect(expand(notTcp).ok).toBe(false);
    const v6Extension = superPacket(false, pattern(3000), 1000, TCP_ACK);
    v6Extension[VNET_HDR_BYTES + 6] = 0; // hop-by-hop options first
    expect(expand(v6Extension).ok).toBe(false);
    const zeroMss = superPacket(true, pattern(3000), 0, TCP_ACK);
    expect(expand(zeroMss).ok).toBe(false);
    const short = superPacket(true, pattern(3000), 1000, TCP_ACK).subarray(0, VNET_HDR_BYTES + 30);
    expect(expand(short).ok).toBe(false);
    const wrongVersion = superPacket(false, pattern(3000), 1000, TCP_ACK);
    wrongVersion[1] = VNET_GSO_TCPV4;
    expect(expand(wrongVersion).ok).toBe(false);
  });
});
