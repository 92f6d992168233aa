import { describe, expect, test } from "bun:test";
import { encodeSockaddr, parseIpv6, readSockaddr, SOCKADDR_BYTES, writeSockaddrPort } from "../../../../src/runtime/linux/sockaddr.ts";
import { SockaddrCache } from "../../../../src/runtime/linux/sockaddr-cache.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
function encode(address: string, family: "IPv4" | "IPv6", port = 443): string {
  const out = new Uint8Array(SOCKADDR_BYTES);
  const length = encodeSockaddr(out, address, family);
  writeSockaddrPort(out, port);
  return length === 0 ? "unreachable" : hex(out.subarray(0, length));
}

describe("sockaddr encoding", () => {
  test("IPv4 on an IPv4 socket: sockaddr_in, family host order, port network order", () => {
    expect(encode("203.0.113.5", "IPv4", 443)).toBe("0200" + "01bb" + "cb007105" + "0000000000000000");
    expect(encode("127.0.0.1", "IPv4", 0x1234)).toBe("0200" + "1234" + "7f000001" + "0000000000000000");
  });

  test("IPv4 on an IPv6 socket: ::ffff:a.b.c.d in a sockaddr_in6; IPv6 as it is", () => {
    expect(encode("127.0.0.1", "IPv6", 443)).toBe("0a00" + "01bb" + "00000000" + "00000000000000000000ffff7f000001" + "00000000");
    expect(encode("::ffff:127.0.0.1", "IPv6", 443)).toBe(encode("127.0.0.1", "IPv6", 443));
    expect(encode("::1", "IPv6", 443)).toBe("0a00" + "01bb" + "00000000" + "00000000000000000000000000000001" + "00000000");
    expect(encode("2001:db8::a:1", "IPv6", 1)).toBe("0a00" + "0001" + "00000000" + "20010db80000000000000000000a0001" + "00000000");
  });

  test("what a socket cannot reach is 0: IPv6 on IPv4, zone indexes, names, malformed text", () => {
    for (const bad of ["::1", "fe80::1%eth0", "localhost", "1.2.3", "1.2.3.256", "01.2.3.4"]) expect(encode(bad, "IPv4")).toBe("unreachable");
    for (const bad of ["fe80::1%eth0", "1::2::3", "1:2:3:4:5:6:7:8:9", "12345::", "g::1", "1:2:3:4:5:6:7"]) expect(encode(bad, "IPv6")).toBe("unreachable");
  });

  test("IPv6 text forms agree with the expanded form", () => {
    const full = (text: string) => hex(parseIpv6(text)!);
    expect(full("::")).toBe("0".repeat(32));
    expect(full("1::")).toBe("0001" + "0".repeat(28));
    expect(full("1:2:3:4:5:6:7:8")).toBe("00010002000300040005000600070008");
    expect(full("1:2:3:4:5:6::8")).toBe("00010002000300040005000600000008");
    expect(full("64:ff9b::198.51.100.7")).toBe("0064ff9b0000000000000000c6336407");
    expect(full("2001:DB8::1")).toBe(full("2001:db8:0:0:0:0:0:1"));
  });

  test("the cache encodes an address once and starts over past its bound", () => {
    const cache = new SockaddrCache("IPv4");
    const first = cache.get("198.51.100.1");
    expect(cache.get("198.51.100.1")).toBe(first);
    expect(first.length).toBe(16);
    expect(cache.get("::1").length).toBe(0);
    for (let i = 0; i < 5_000; i++) cache.get(`10.${(i >> 8) & 255}.${i & 255}.1`);
    expect(cache.size).toBeLessThanOrEqual(4_096);
  });
});

describe("a received datagram's source (readSockaddr)", () => {
  const encoded = (address: string, family: "IPv4" | "IPv6", port: number) => {
    const out = new Uint8Array(SOCKADDR_BYTES + 4);
    encodeSockaddr(out.subarray(4), address, family);
    writeSockaddrPort(out, port, 4);
    return out;
  };

  test("reads what encodeSockaddr wrote, at an offset: IPv4, IPv6, and an IPv4 peer of a dual-stack socket unmapped", () => {
    expect(readSockaddr(encoded("203.0.113.5", "IPv4", 40000), 4)).toEqual({ address: "203.0.113.5", port: 40000 });
    expect(readSockaddr(encoded("2001:db8:1::2", "IPv6", 443), 4)).toEqual({ address: "2001:db8:1::2", port: 443 });
    expect(readSockaddr(encoded("203.0.113.5", "IPv6", 5), 4)).toEqual({ address: "203.0.113.5", port: 5 });
    // Unmapped, it encodes to the same sockaddr again for that socket: an answer goes back to the sender.
    const back = new Uint8Array(SOCKADDR_BYTES);
    encodeSockaddr(back, "203.0.113.5", "IPv6");
    writeSockaddrPort(back, 5);
    expect(hex(back)).toBe(hex(encoded("203.0.113.5", "IPv6", 5).subarray(4)));
  });

  test("another family is not a source", () => {
    const unix = new Uint8Array(SOCKADDR_BYTES);
    unix[0] = 1; // AF_UNIX
    expect(readSockaddr(unix)).toBeNull();
  });
});
