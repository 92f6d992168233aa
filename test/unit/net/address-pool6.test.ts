import { describe, expect, test } from "bun:test";
import { AddressPool6 } from "../../../src/net/address-pool6.ts";
import { formatIpv6, parseIpv6, parseIpv6Cidr } from "../../../src/net/ipv6.ts";

const pool = (cidr: string) => {
  const parsed = parseIpv6Cidr(cidr);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return new AddressPool6(parsed.value);
};
const lease = (p: AddressPool6, hint?: string) => {
  const r = p.lease(hint === undefined ? undefined : parseIpv6(hint));
  return r.ok ? formatIpv6(r.value) : r.error.code;
};

describe("the IPv6 address pool", () => {
  test("the gateway has the first address, clients the next ones; releases are reused", () => {
    const p = pool("2001:db8:10::/64");
    expect(formatIpv6(p.gatewayAddress)).toBe("2001:db8:10::1");
    expect(p.capacity).toBe(2 ** 32 - 2);
    expect(lease(p)).toBe("2001:db8:10::2");
    expect(lease(p)).toBe("2001:db8:10::3");
    p.release(parseIpv6("2001:db8:10::2")!);
    expect(p.used).toBe(1);
  });

  test("a free address of the pool is honoured as a hint (a reconnect); others fall back to the next free one", () => {
    const p = pool("2001:db8:10::/64");
    expect(lease(p, "2001:db8:10::99")).toBe("2001:db8:10::99");
    expect(lease(p, "2001:db8:10::99")).toBe("2001:db8:10::2"); // taken
    expect(lease(p, "2001:db8:10::1")).toBe("2001:db8:10::3"); // the gateway's
    expect(lease(p, "2001:db8:10:0:1::5")).toBe("2001:db8:10::4"); // outside the leased range
    expect(lease(p, "2001:db8:99::5")).toBe("2001:db8:10::5"); // another network
  });

  test("a small pool fills up and says what to do", () => {
    const p = pool("2001:db8:10::/126");
    expect(lease(p)).toBe("2001:db8:10::2");
    expect(lease(p)).toBe("2001:db8:10::3");
    const full = p.lease();
    expect(!full.ok && full.error.message).toContain("use a larger --pool6");
  });

  test("pools outside /64../126 are refused", () => {
    expect(() => pool("2001:db8::/48")).toThrow(/64 to \/126/);
    expect(() => pool("2001:db8::/127")).toThrow(/64 to \/126/);
  });
});
