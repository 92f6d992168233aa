import { describe, expect, test } from "bun:test";
import { UDP_IDLE_MS } from "../../../src/firewall/flow-table.ts";
import { FlowTable6, OPENED_OUTBOUND } from "../../../src/firewall/flow-table6.ts";
import { ICMP6_PROHIBITED_MAX, writeIcmp6Prohibited } from "../../../src/firewall/icmp6-prohibited.ts";
import { parseIpv6 } from "../../../src/net/ipv6.ts";
import { ipv6Packet, ping6, tcp6, udp6 } from "./packets6.ts";

const words = (text: string) => Uint32Array.from(parseIpv6(text)!);

describe("FlowTable6", () => {
  test("a flow is found by its full 5-tuple only: one differing word, port or protocol is another flow", () => {
    const t = new FlowTable6(64);
    const client = words("2001:db8:10::2");
    const peer = words("2001:db8:2::10");
    expect(t.open(6, client, peer, 40000, 22, OPENED_OUTBOUND, 0)).toBe(true);
    expect(t.touch(6, client, peer, 40000, 22, 1)).toBe(OPENED_OUTBOUND);
    for (let w = 0; w < 4; w++) {
      const other = peer.slice();
      other[w] = other[w]! ^ 1;
      expect(t.touch(6, client, other, 40000, 22, 1)).toBe(0);
      const otherClient = client.slice();
      otherClient[w] = otherClient[w]! ^ 0x80000000;
      expect(t.touch(6, otherClient, peer, 40000, 22, 1)).toBe(0);
    }
    expect(t.touch(17, client, peer, 40000, 22, 1)).toBe(0);
    expect(t.touch(6, client, peer, 40001, 22, 1)).toBe(0);
    expect(t.touch(6, client, peer, 40000, 23, 1)).toBe(0);
  });

  test("idle flows expire by protocol; sweep forgets them", () => {
    const t = new FlowTable6(64);
    const client = words("2001:db8:10::2");
    const peer = words("2001:db8:2::10");
    t.open(17, client, peer, 5000, 53, OPENED_OUTBOUND, 0);
    t.open(6, client, peer, 5000, 22, OPENED_OUTBOUND, 0);
    expect(t.touch(17, client, peer, 5000, 53, UDP_IDLE_MS)).toBe(OPENED_OUTBOUND);
    expect(t.touch(17, client, peer, 5000, 53, 2 * UDP_IDLE_MS + 1)).toBe(0);
    t.sweep(2 * UDP_IDLE_MS + 1);
    expect(t.size).toBe(1);
    expect(t.touch(6, client, peer, 5000, 22, 2 * UDP_IDLE_MS + 1)).toBe(OPENED_OUTBOUND);
  });

  test("bounded: beyond maxFlows live flows a new one is refused and counted; expired ones make room", () => {
    const t = new FlowTable6(100);
    const client = words("2001:db8:10::2");
    const peer = words("2001:db8:2::10");
    for (let i = 0; i < 100; i++) {
      peer[3] = i;
      expect(t.open(17, client, peer, 1000 + i, 53, OPENED_OUTBOUND, 0)).toBe(true);
    }
    peer[3] = 500;
    expect(t.open(17, client, peer, 9999, 53, OPENED_OUTBOUND, 10)).toBe(false);
    expect(t.refusedFull).toBe(1);
    expect(t.open(17, client, peer, 9999, 53, OPENED_OUTBOUND, UDP_IDLE_MS + 10)).toBe(true);
    expect(t.size).toBe(1);
  });

  test("removing flows keeps every other flow findable (backward-shift deletion over the growing table)", () => {
    const t = new FlowTable6(4096);
    const client = words("2001:db8:10::2");
    const peer = words("2001:db8:2::");
    for (let i = 0; i < 3000; i++) {
      peer[2] = i >>> 4;
      peer[3] = i & 15;
      t.open(6, client, peer, i, 443, OPENED_OUTBOUND, 0);
    }
    const removed = t.removeWhere((_proto, p, clientPort) => clientPort % 3 === 0 && p[3]! === (clientPort & 15));
    expect(removed).toBe(1000);
    for (let i = 0; i < 3000; i++) {
      peer[2] = i >>> 4;
      peer[3] = i & 15;
      expect(t.touch(6, client, peer, i, 443, 1)).toBe(i % 3 === 0 ? 0 : OPENED_OUTBOUND);
    }
  });
});

/** The checksum computed differently from the code under test: a pseudo-header buffer summed with a DataView. */
function independentChecksum(packet: Uint8Array): number {
  const length = packet.length - 40;
  const buf = new Uint8Array(40 + length + (length % 2));
  buf.set(packet.subarray(8, 40), 0);
  const dv = new DataView(buf.buffer);
  dv.setUint32(32, length);
  buf[39] = 58;
  buf.set(packet.subarray(40), 40);
  let sum = 0;
  for (let i = 0; i < buf.length; i += 2) sum += dv.getUint16(i);
  while (sum > 0xffff) sum = (sum & 0xffff) + Math.floor(sum / 0x10000);
  return sum; // 0xffff when the checksum in place is right
}

describe("ICMPv6 administratively prohibited", () => {
  test("the reply's bytes: from the denied destination to the sender, type 1 code 1, quoting the packet, a valid checksum", () => {
    const original = tcp6("2001:db8:10::2", "2001:db8:2::10", 40000, 22);
    const out = new Uint8Array(ICMP6_PROHIBITED_MAX);
    const length = writeIcmp6Prohibited(original, out);
    expect(length).toBe(40 + 8 + original.length);
    const reply = out.subarray(0, length);
    expect(reply[0]! >> 4).toBe(6);
    expect((reply[4]! << 8) | reply[5]!).toBe(length - 40);
    expect(reply[6]).toBe(58);
    expect(reply[7]).toBeGreaterThan(0);
    expect([...reply.subarray(8, 24)]).toEqual([...original.subarray(24, 40)]);
    expect([...reply.subarray(24, 40)]).toEqual([...original.subarray(8, 24)]);
    expect([reply[40], reply[41]]).toEqual([1, 1]);
    expect([...reply.subarray(44, 48)]).toEqual([0, 0, 0, 0]);
    expect([...reply.subarray(48)]).toEqual([...original]);
    expect(independentChecksum(reply)).toBe(0xffff);
  });

  test("a large packet is quoted up to 1280 bytes in all; odd lengths checksum right", () => {
    const big = ipv6Packet(17, "2001:db8:10::2", "2001:db8:2::10", new Array<number>(1500 - 40).fill(0).map((_, i) => i & 0xff));
    const out = new Uint8Array(ICMP6_PROHIBITED_MAX);
    const length = writeIcmp6Prohibited(big, out);
    expect(length).toBe(1280);
    expect([...out.subarray(48, 1280)]).toEqual([...big.subarray(0, 1232)]);
    expect(independentChecksum(out.subarray(0, length))).toBe(0xffff);
    const odd = ipv6Packet(17, "2001:db8:10::2", "2001:db8:2::10", [0, 1, 0, 53, 0, 9, 0, 0, 7]);
    const oddLength = writeIcmp6Prohibited(odd, out);
    expect(oddLength % 2).toBe(1);
    expect(independentChecksum(out.subarray(0, oddLength))).toBe(0xffff);
  });

  test("no reply to a packet sent to a multicast address (ff00::/8)", () => {
    const out = new Uint8Array(ICMP6_PROHIBITED_MAX);
    expect(writeIcmp6Prohibited(udp6("2001:db8:10::2", "ff02::fb", 5353, 5353), out)).toBe(0);
    expect(writeIcmp6Prohibited(udp6("2001:db8:10::2", "fe80::1", 5353, 5353), out)).toBeGreaterThan(0);
  });

  test("no reply to an ICMPv6 error; an echo request may get one", () => {
    const out = new Uint8Array(ICMP6_PROHIBITED_MAX);
    expect(writeIcmp6Prohibited(ipv6Packet(58, "2001:db8:10::2", "2001:db8:2::10", [1, 4, 0, 0, 0, 0, 0, 0]), out)).toBe(0);
    expect(writeIcmp6Prohibited(ping6("2001:db8:10::2", "2001:db8:2::10", 128, 7), out)).toBeGreaterThan(0);
  });
});
