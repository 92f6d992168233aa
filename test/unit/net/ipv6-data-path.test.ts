import { describe, expect, test } from "bun:test";
import { DropCounters } from "../../../src/net/drop-counters.ts";
import { antiSpoofing, Firewall } from "../../../src/net/firewall.ts";
import { ipv6Bytes, parseIpv6, type Ipv6Words } from "../../../src/net/ipv6.ts";
import { Router, type PacketSink } from "../../../src/net/router.ts";
import { Router6 } from "../../../src/net/router6.ts";

/** An ICMPv6 echo request (8-byte payload) from `src` to `dst`. */
function ipv6Packet(src: string, dst: string, payloadLength = 8): Uint8Array {
  const p = new Uint8Array(40 + payloadLength);
  p[0] = 0x60;
  p[4] = payloadLength >> 8;
  p[5] = payloadLength & 0xff;
  p[6] = 58;
  p[7] = 64;
  p.set(ipv6Bytes(parseIpv6(src)!), 8);
  p.set(ipv6Bytes(parseIpv6(dst)!), 24);
  p[40] = 128;
  return p;
}

function ipv4Packet(src: number, dst: number): Uint8Array {
  const p = new Uint8Array(20);
  p[0] = 0x45;
  p[3] = 20;
  new DataView(p.buffer).setUint32(12, src);
  new DataView(p.buffer).setUint32(16, dst);
  return p;
}

const sink = () => {
  const got: Uint8Array[] = [];
  return { got, sendPacket: (p: Uint8Array) => void got.push(p) } satisfies PacketSink & { got: Uint8Array[] };
};
const base = parseIpv6("2001:db8:10::")!;
const words = (text: string) => parseIpv6(text)! as Ipv6Words;

describe("IPv6 routing from the TUN device", () => {
  test("an IPv6 destination reaches the session holding that address; others are counted as ipv6_no_route", () => {
    const drops = new DropCounters();
    const router = new Router(drops, new Router6([base[0], base[1], base[2]], drops));
    const alice = sink();
    const bob = sink();
    router.ipv6!.add(words("2001:db8:10::2"), alice);
    router.ipv6!.add(words("2001:db8:10::3"), bob);
    router.add(0x0a0a0002, alice);

    router.route(ipv6Packet("2001:db8:2::2", "2001:db8:10::2"));
    router.route(ipv6Packet("2001:db8:2::2", "2001:db8:10::3"));
    router.route(ipv4Packet(0xc6336402, 0x0a0a0002));
    expect(alice.got.length).toBe(2);
    expect(bob.got.length).toBe(1);

    // Same last word, another network: not ours.
    router.route(ipv6Packet("2001:db8:2::2", "2001:db8:11::2"));
    router.route(ipv6Packet("2001:db8:2::2", "2001:db8:10::4"));
    expect(drops.get("ipv6_no_route")).toBe(2);
    expect(alice.got.length).toBe(2);
  });

  test("a route is removed only by the sink that holds it; addresses outside the pool are refused", () => {
    const drops = new DropCounters();
    const router6 = new Router6([base[0], base[1], base[2]], drops);
    const old = sink();
    const fresh = sink();
    router6.add(words("2001:db8:10::2"), old);
    router6.add(words("2001:db8:10::2"), fresh);
    router6.remove(words("2001:db8:10::2"), old);
    expect(router6.size).toBe(1);
    router6.remove(words("2001:db8:10::2"), fresh);
    expect(router6.size).toBe(0);
    expect(router6.add(words("2001:db8:99::2"), fresh)).toBe(false);
  });

  test("a truncated IPv6 packet is dropped, not routed", () => {
    const drops = new DropCounters();
    const router = new Router(drops, new Router6([base[0], base[1], base[2]], drops));
    const alice = sink();
    router.ipv6!.add(words("2001:db8:10::2"), alice);
    const packet = ipv6Packet("2001:db8:2::2", "2001:db8:10::2");
    router.route(packet.subarray(0, 44)); // the header says 8 bytes of payload, 4 are there
    expect(alice.got.length).toBe(0);
    expect(drops.get("ipv6_malformed")).toBe(1);
  });

  test("without an IPv6 pool, IPv6 from the TUN is not routed", () => {
    const drops = new DropCounters();
    const router = new Router(drops);
    router.route(ipv6Packet("2001:db8:2::2", "2001:db8:10::2"));
    expect(drops.get("not_ipv4")).toBe(1);
  });
});

describe("IPv6 source validation", () => {
  const endpoint = { address: 0x0a0a0002, address6: words("2001:db8:10::2") };

  test("the session's own IPv6 source passes; any other is ipv6_spoofed_source", () => {
    const drops = new DropCounters();
    const firewall = new Firewall([antiSpoofing], drops);
    expect(firewall.allowFromClient(endpoint, ipv6Packet("2001:db8:10::2", "2001:db8:2::2"))).toBe(true);
    expect(firewall.allowFromClient(endpoint, ipv6Packet("2001:db8:10::3", "2001:db8:2::2"))).toBe(false);
    expect(firewall.allowFromClient(endpoint, ipv6Packet("fe80::2", "2001:db8:2::2"))).toBe(false);
    expect(firewall.allowFromClient(endpoint, ipv6Packet("2001:db8:11::2", "2001:db8:2::2"))).toBe(false);
    expect(drops.get("ipv6_spoofed_source")).toBe(3);
    // IPv4 still checked against the IPv4 address.
    expect(firewall.allowFromClient(endpoint, ipv4Packet(0x0a0a0002, 0xc6336402))).toBe(true);
    expect(firewall.allowFromClient(endpoint, ipv4Packet(0x0a0a0003, 0xc6336402))).toBe(false);
  });

  test("a client without an IPv6 address may send no IPv6 at all", () => {
    const drops = new DropCounters();
    const firewall = new Firewall([antiSpoofing], drops);
    expect(firewall.allowFromClient({ address: 0x0a0a0002 }, ipv6Packet("2001:db8:10::2", "2001:db8:2::2"))).toBe(false);
    expect(drops.get("ipv6_not_assigned")).toBe(1);
  });

  test("a malformed IPv6 packet is dropped", () => {
    const drops = new DropCounters();
    const firewall = new Firewall([antiSpoofing], drops);
    expect(firewall.allowFromClient(endpoint, ipv6Packet("2001:db8:10::2", "2001:db8:2::2").subarray(0, 39))).toBe(false);
    expect(drops.get("ipv6_malformed")).toBe(1);
  });
});
