import { describe, expect, test } from "bun:test";
import { mix, sourceWord, steeringIndex, steeringProgram, SOCK_FILTER_BYTES } from "../../../../src/runtime/linux/reuseport-steering.ts";
import { parseIpv4, parseIpv6 } from "../../../../src/runtime/linux/sockaddr.ts";
import { ipHeaderFrom, runCbpf } from "./cbpf-run.ts";

const program = (members: number): Uint8Array => {
  const built = steeringProgram(members);
  if (!built.ok) throw built.error;
  return built.value;
};

const consecutive = (prefix: string, from: number, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${from + i}`);

describe("steeringIndex", () => {
  test("is deterministic and in range", () => {
    for (const members of [1, 2, 3, 5, 8]) {
      for (const address of ["203.0.113.10", "198.51.100.7", "2001:db8::1", "2001:db8:1:2:3:4:5:6"]) {
        const index = steeringIndex(address, members);
        expect(index).toBe(steeringIndex(address, members));
        expect(index).toBeGreaterThanOrEqual(0);
        expect(index).toBeLessThan(members);
      }
    }
  });

  test("spreads consecutive IPv4 and IPv6 addresses over all members, none far from its share", () => {
    const ipv6 = Array.from({ length: 240 }, (_, i) => `2001:db8::${(0x100 + i).toString(16)}`);
    const groups = [consecutive("203.0.113.", 0, 240), ipv6];
    for (const addresses of groups) {
      for (const members of [2, 3, 4]) {
        const counts = new Array<number>(members).fill(0);
        for (const address of addresses) counts[steeringIndex(address, members)]!++;
        const share = addresses.length / members;
        for (const count of counts) {
          expect(count).toBeGreaterThan(share * 0.7);
          expect(count).toBeLessThan(share * 1.3);
        }
      }
    }
  });

  test("spreads addresses that step by the group size (a plain mod N would put them all on one member)", () => {
    for (const members of [2, 3, 4]) {
      const strided = Array.from({ length: 60 }, (_, i) => `198.51.100.${i * members}`).filter((a) => parseIpv4(a) !== null);
      const sameHost = Array.from({ length: 60 }, (_, i) => `10.${i}.${i * members}.1`);
      for (const addresses of [strided, sameHost]) {
        const used = new Set(addresses.map((a) => steeringIndex(a, members)));
        expect(used.size).toBe(members);
      }
    }
  });

  test("an IPv4-mapped IPv6 address gets its IPv4 form's index (the kernel steers the IPv4 packet)", () => {
    for (const address of consecutive("203.0.113.", 10, 20)) {
      expect(steeringIndex(`::ffff:${address}`, 3)).toBe(steeringIndex(address, 3));
    }
    expect(sourceWord("::ffff:203.0.113.10")).toBe(0xcb00710a);
  });

  test("the source port plays no part: only the address is an input", () => {
    expect(steeringIndex("203.0.113.10", 3)).toBe(mix(0xcb00710a) % 3);
  });

  test("not an address, or a group size out of range: -1", () => {
    expect(steeringIndex("gw.example", 2)).toBe(-1);
    expect(steeringIndex("fe80::1%eth0", 2)).toBe(-1);
    expect(steeringIndex("203.0.113.10", 0)).toBe(-1);
    expect(steeringIndex("203.0.113.10", 1.5)).toBe(-1);
  });
});

describe("steeringProgram", () => {
  test("is an array of struct sock_filter that starts by reading the IP version at SKF_NET_OFF", () => {
    const bytes = program(3);
    expect(bytes.byteLength % SOCK_FILTER_BYTES).toBe(0);
    const view = new DataView(bytes.buffer);
    expect(view.getUint16(0, true)).toBe(0x30); // BPF_LD | BPF_B | BPF_ABS
    expect(view.getUint32(4, true)).toBe(0xfff00000); // SKF_NET_OFF + 0
    const last = bytes.byteLength - SOCK_FILTER_BYTES;
    expect(view.getUint16(last, true)).toBe(0x16); // BPF_RET | BPF_A
    expect(view.getUint16(last - SOCK_FILTER_BYTES, true)).toBe(0x94); // BPF_ALU | BPF_MOD | BPF_K
    expect(view.getUint32(last - SOCK_FILTER_BYTES + 4, true)).toBe(3);
  });

  test("computes what steeringIndex computes, for IPv4 and IPv6 headers", () => {
    for (const members of [1, 2, 3, 7]) {
      const bytes = program(members);
      for (const address of consecutive("203.0.113.", 0, 64)) {
        expect(runCbpf(bytes, ipHeaderFrom(parseIpv4(address)!))).toBe(steeringIndex(address, members));
      }
      for (const address of [...consecutive("2001:db8::", 1, 40), "2001:db8:ffff:1:2:3:4:5", "::1"]) {
        expect(runCbpf(bytes, ipHeaderFrom(parseIpv6(address)!))).toBe(steeringIndex(address, members));
      }
    }
  });

  test("refuses a group size the kernel cannot have", () => {
    for (const members of [0, -1, 2.5, 0x10000]) {
      const built = steeringProgram(members);
      expect(built.ok).toBe(false);
      if (!built.ok) expect(built.error.code).toBe("steering_failed");
    }
  });
});
