import { describe, expect, test } from "bun:test";
import { AddressPool } from "../../../src/net/address-pool.ts";
import { formatIpv4, parseCidr, parseIpv4 } from "../../../src/net/ipv4.ts";

const pool = (cidr: string) => {
  const r = parseCidr(cidr);
  if (!r.ok) throw r.error;
  return new AddressPool(r.value);
};

describe("AddressPool", () => {
  test("the gateway takes .1; clients get .2 up to the last address before broadcast", () => {
    const p = pool("10.10.0.0/29");
    expect(formatIpv4(p.gatewayAddress)).toBe("10.10.0.1");
    const leased: string[] = [];
    for (let i = 0; i < p.capacity; i++) {
      const r = p.lease();
      if (!r.ok) throw r.error;
      leased.push(formatIpv4(r.value));
    }
    expect(leased).toEqual(["10.10.0.2", "10.10.0.3", "10.10.0.4", "10.10.0.5", "10.10.0.6"]);
    const full = p.lease();
    expect(full.ok).toBe(false);
    if (!full.ok) expect(full.error.code).toBe("pool_exhausted");
  });

  test("a released address can be leased again; a preferred free address is honoured", () => {
    const p = pool("10.10.0.0/24");
    const a = p.lease();
    if (!a.ok) throw a.error;
    p.release(a.value);
    expect(p.used).toBe(0);
    const preferred = parseIpv4("10.10.0.77")!;
    const b = p.lease(preferred);
    expect(b.ok && b.value).toBe(preferred);
    // Taken, outside the pool, the gateway's or the broadcast: fall back to the next free one.
    for (const bad of ["10.10.0.77", "10.20.0.5", "10.10.0.1", "10.10.0.255"]) {
      const c = p.lease(parseIpv4(bad));
      expect(c.ok).toBe(true);
      if (c.ok) expect(formatIpv4(c.value)).not.toBe(bad);
    }
  });

  test("refuses pools too small to hold a client", () => {
    expect(() => pool("10.10.0.0/31")).toThrow(/too small/);
  });
});

describe("parseCidr", () => {
  test("accepts prefix and dotted-mask forms; rejects host bits, bad masks and garbage", () => {
    expect(parseCidr("198.51.100.0/24")).toEqual({ ok: true, value: { network: parseIpv4("198.51.100.0")!, prefixLength: 24 } });
    expect(parseCidr("198.51.100.0/255.255.255.0")).toEqual(parseCidr("198.51.100.0/24"));
    expect(parseCidr("198.51.100.7")).toEqual({ ok: true, value: { network: parseIpv4("198.51.100.7")!, prefixLength: 32 } });
    for (const bad of ["198.51.100.1/24", "198.51.100.0/33", "198.51.100.0/255.0.255.0", "300.1.1.1/8", "01.2.3.4/8", "a.b.c.d/8", "1.2.3.0/24/1", ""]) {
      const r = parseCidr(bad);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.code).toBe("invalid_cidr");
    }
  });
});
