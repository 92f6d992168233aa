import { describe, expect, test } from "bun:test";
import { formatIpv6, ipv6Bytes, ipv6CidrContains, parseIpv6, parseIpv6Cidr, unmapIpv4 } from "../../../src/net/ipv6.ts";

describe("IPv6 addresses as four words", () => {
  test("parses the usual forms", () => {
    expect(parseIpv6("2001:db8::1")).toEqual([0x20010db8, 0, 0, 1]);
    expect(parseIpv6("::")).toEqual([0, 0, 0, 0]);
    expect(parseIpv6("::ffff:192.0.2.1")).toEqual([0, 0, 0xffff, 0xc0000201]);
    expect(parseIpv6("2001:DB8:10:0:0:0:0:ffff")).toEqual([0x20010db8, 0x100000, 0, 0xffff]);
  });

  test("refuses what is not an address", () => {
    for (const bad of ["", "1.2.3.4", "2001:db8::1::2", "2001:db8:1:2:3:4:5:6:7", "g::1", "2001:db8::12345", "1:2:3:4:5:6:7", "::1.2.3"]) {
      expect(parseIpv6(bad)).toBeUndefined();
    }
  });

  test("formats as RFC 5952: lower case, the longest zero run compressed, single zero groups kept", () => {
    expect(formatIpv6(parseIpv6("2001:0DB8:0000:0000:0000:0000:0000:0001")!)).toBe("2001:db8::1");
    expect(formatIpv6(parseIpv6("2001:db8:0:1:0:0:0:2")!)).toBe("2001:db8:0:1::2");
    expect(formatIpv6(parseIpv6("2001:db8:0:1:1:1:1:1")!)).toBe("2001:db8:0:1:1:1:1:1");
    expect(formatIpv6([0, 0, 0, 0])).toBe("::");
    expect(formatIpv6(parseIpv6("2001:db8:10::")!)).toBe("2001:db8:10::");
  });

  test("networks: host bits must be clear, containment by prefix", () => {
    const net = parseIpv6Cidr("2001:db8:10::/64");
    expect(net.ok && net.value.prefixLength).toBe(64);
    if (!net.ok) return;
    expect(ipv6CidrContains(net.value, parseIpv6("2001:db8:10::ab")!)).toBe(true);
    expect(ipv6CidrContains(net.value, parseIpv6("2001:db8:11::ab")!)).toBe(false);
    const sloppy = parseIpv6Cidr("2001:db8:10::1/64");
    expect(!sloppy.ok && sloppy.error.message).toContain("did you mean 2001:db8:10::/64");
    expect(parseIpv6Cidr("2001:db8::/129").ok).toBe(false);
    expect(parseIpv6Cidr("10.0.0.0/8").ok).toBe(false);
  });

  test("bytes in network order, and IPv4-mapped client addresses unmapped", () => {
    expect([...ipv6Bytes(parseIpv6("2001:db8::102")!)]).toEqual([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2]);
    expect(unmapIpv4("::ffff:203.0.113.2")).toBe("203.0.113.2");
    expect(unmapIpv4("2001:db8:1::2")).toBe("2001:db8:1::2");
    expect(unmapIpv4("203.0.113.2")).toBe("203.0.113.2");
  });
});
