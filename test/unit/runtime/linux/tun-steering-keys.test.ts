import { expect, test } from "bun:test";
import { parseIpv4 } from "../../../../src/net/ipv4.ts";
import { parseIpv6 } from "../../../../src/net/ipv6.ts";
import { bpfSyscallNumber } from "../../../../src/runtime/linux/bpf-libc.ts";
import { ipv4SteeringKey, ipv6SteeringKey, u32Bytes } from "../../../../src/runtime/linux/tun-steering-keys.ts";

const v4 = (text: string) => parseIpv4(text)!;

test("an IPv4 key is the offset in the pool; outside base .. base + size - 1 there is none", () => {
  const base = v4("10.98.0.0");
  expect(ipv4SteeringKey(v4("10.98.0.0"), base, 256)).toBe(0);
  expect(ipv4SteeringKey(v4("10.98.0.5"), base, 256)).toBe(5);
  expect(ipv4SteeringKey(v4("10.98.0.255"), base, 256)).toBe(255);
  expect(ipv4SteeringKey(v4("10.98.1.0"), base, 256)).toBeUndefined();
  expect(ipv4SteeringKey(v4("10.97.255.255"), base, 256)).toBeUndefined(); // below the base: wraps to a huge offset
});

test("IPv4 keys for pools above 128.0.0.0 (addresses that are negative as s32)", () => {
  const base = v4("192.168.0.0");
  expect(ipv4SteeringKey(v4("192.168.3.7"), base, 1 << 16)).toBe(3 * 256 + 7);
  expect(ipv4SteeringKey(v4("192.169.0.0"), base, 1 << 16)).toBeUndefined();
  expect(ipv4SteeringKey(v4("10.0.0.1"), base, 1 << 16)).toBeUndefined();
});

test("an IPv6 key is the last word when the first three are the pool's", () => {
  const base = [0x20010db8, 0x00980000, 0] as const;
  expect(ipv6SteeringKey(parseIpv6("2001:db8:98::5")!, base)).toBe(5);
  expect(ipv6SteeringKey(parseIpv6("2001:db8:98::ffff:fffe")!, base)).toBe(0xfffffffe);
  expect(ipv6SteeringKey(parseIpv6("2001:db8:99::5")!, base)).toBeUndefined();
  expect(ipv6SteeringKey(parseIpv6("2001:db8:98:0:1::5")!, base)).toBeUndefined();
});

test("keys and values are u32 in host order, as the program stores its register", () => {
  const littleEndian = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;
  expect(Array.from(u32Bytes(0x0a000005))).toEqual(littleEndian ? [5, 0, 0, 0x0a] : [0x0a, 0, 0, 5]);
  expect(Array.from(u32Bytes(0xfffffffe))).toEqual(littleEndian ? [0xfe, 0xff, 0xff, 0xff] : [0xff, 0xff, 0xff, 0xfe]);
});

test("the bpf syscall number per architecture; none for one this code does not know", () => {
  expect(bpfSyscallNumber("x64")).toBe(321);
  expect(bpfSyscallNumber("arm64")).toBe(280);
  expect(bpfSyscallNumber("s390x")).toBeUndefined();
});
