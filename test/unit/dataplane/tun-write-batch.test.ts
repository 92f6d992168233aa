import { describe, expect, test } from "bun:test";
import { TunWriteBatch } from "../../../src/dataplane/tun-write-batch.ts";
import { DropCounters } from "../../../src/net/drop-counters.ts";
import { MemoryTun } from "../../../src/runtime/memory/memory-tun.ts";

const packet = (n: number, length = 1400) => new Uint8Array(length).fill(n & 0xff);

describe("TunWriteBatch", () => {
  test("packets are copied: the caller may reuse its buffer before the flush", () => {
    const tun = new MemoryTun();
    const batch = new TunWriteBatch(tun, new DropCounters());
    const reused = packet(1, 100);
    batch.add(reused);
    reused.fill(2);
    batch.add(reused);
    batch.flush();
    expect(tun.written.map((p) => p[0])).toEqual([1, 2]);
    expect(tun.batches).toEqual([2]);
  });

  test("a full batch is written before more is taken, in order; a packet larger than the slab goes alone", () => {
    const tun = new MemoryTun();
    const batch = new TunWriteBatch(tun, new DropCounters());
    for (let i = 0; i < 300; i++) batch.add(packet(i));
    batch.add(packet(7, 300_000));
    batch.flush();
    expect(tun.batches).toEqual([128, 128, 44]);
    expect(tun.writeCalls).toBe(1);
    expect(tun.written.length).toBe(301);
    expect(tun.written.slice(0, 300).every((p, i) => p[0] === (i & 0xff))).toBe(true);
    batch.flush(); // nothing left: no empty write
    expect(tun.batches.length).toBe(3);
  });

  test("packets the kernel refuses are counted as tun_write_failed", () => {
    const tun = new MemoryTun();
    tun.writeMany = (packets) => packets.length - 1;
    const drops = new DropCounters();
    const batch = new TunWriteBatch(tun, drops);
    batch.add(packet(1));
    batch.add(packet(2));
    batch.flush();
    expect(drops.get("tun_write_failed")).toBe(1);
  });
});

describe("TunWriteBatch, DTLS packets", () => {
  /** IPv4 TCP with `payload` bytes; byte 40 (the first of the payload) tells packets apart. */
  const tcp = (mark: number, payload = 160) => {
    const p = new Uint8Array(40 + payload);
    p[0] = 0x45;
    p[9] = 6;
    p[32] = 0x50; // data offset: 5 words, no options
    p[40] = mark;
    return p;
  };
  /** A pure ACK as Linux sends it: 12 bytes of options (NOP, NOP, timestamps), no payload. */
  const ackWithTimestamps = (ipv6: boolean) => {
    const ipHeader = ipv6 ? 40 : 20;
    const p = new Uint8Array(ipHeader + 32);
    if (ipv6) {
      p[0] = 0x60;
      p[6] = 6;
    } else {
      p[0] = 0x45;
      p[9] = 6;
    }
    p[ipHeader + 12] = 0x80; // data offset: 8 words
    p[ipHeader + 20] = 1;
    p[ipHeader + 21] = 1;
    p[ipHeader + 22] = 8;
    p[ipHeader + 23] = 10;
    return p;
  };

  test("with a merging TUN, a burst's TCP segments wait for the deferred flush and go in one batch", () => {
    const tun = new MemoryTun({ coalesces: true });
    const deferred: (() => void)[] = [];
    const batch = new TunWriteBatch(tun, new DropCounters(), (run) => deferred.push(run));
    const datagram = tcp(0);
    for (let i = 0; i < 5; i++) {
      datagram[40] = i; // the socket reuses its receive buffer
      batch.writeFromDatagram(datagram);
    }
    expect(tun.written.length).toBe(0);
    expect(deferred.length).toBe(1); // one flush per burst, not per packet
    deferred[0]!();
    expect(tun.batches).toEqual([5]);
    expect(tun.written.map((p) => p[40])).toEqual([0, 1, 2, 3, 4]);
    batch.writeFromDatagram(datagram);
    expect(deferred.length).toBe(2);
  });

  test("with a merging TUN, a packet that is not TCP goes at once, after what waits", () => {
    const tun = new MemoryTun({ coalesces: true });
    const batch = new TunWriteBatch(tun, new DropCounters(), () => {});
    batch.writeFromDatagram(tcp(1));
    batch.writeFromDatagram(tcp(2));
    const pureAck = tcp(3, 0);
    const ping = new Uint8Array(84);
    ping[0] = 0x45;
    ping[9] = 1;
    batch.writeFromDatagram(pureAck);
    batch.writeFromDatagram(ping);
    expect(tun.batches).toEqual([3, 1]);
    expect(tun.written.map((p) => p.length)).toEqual([200, 200, 40, 84]);
  });

  test("with a merging TUN, pure ACKs (IPv4 and IPv6, with timestamps) wait with the burst's data, in order", () => {
    const tun = new MemoryTun({ coalesces: true });
    const deferred: (() => void)[] = [];
    const batch = new TunWriteBatch(tun, new DropCounters(), (run) => deferred.push(run));
    batch.writeFromDatagram(ackWithTimestamps(false));
    batch.writeFromDatagram(tcp(1));
    batch.writeFromDatagram(ackWithTimestamps(true));
    expect(tun.written.length).toBe(0);
    expect(deferred.length).toBe(1);
    deferred[0]!();
    expect(tun.batches).toEqual([3]);
    expect(tun.written.map((p) => p.length)).toEqual([52, 200, 72]);
  });

  test("with a TUN that does not merge, each packet is written at once", () => {
    const tun = new MemoryTun();
    const batch = new TunWriteBatch(tun, new DropCounters(), () => {
      throw new Error("no deferral expected");
    });
    batch.writeFromDatagram(packet(1));
    batch.writeFromDatagram(packet(2));
    expect(tun.batches).toEqual([1, 1]);
  });
});
