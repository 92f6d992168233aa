import { describe, expect, test } from "bun:test";
import { checkTunOptions } from "../../../../src/runtime/linux/tun-config.ts";

const base = { name: "gw0", address: "10.10.0.1", prefixLength: 24, mtu: 1400 };

describe("the TUN device's IPv6 options", () => {
  test("the address becomes the 16 bytes of struct in6_addr, with its prefix length", () => {
    const r = checkTunOptions({ ...base, ipv6: { address: "2001:db8:10::1", prefixLength: 64 } });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect([...r.value.ipv6!.address]).toEqual([0x20, 0x01, 0x0d, 0xb8, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    expect(r.value.ipv6!.prefixLength).toBe(64);
  });

  test("without IPv6 options the device is IPv4 only", () => {
    const r = checkTunOptions(base);
    expect(r.ok && r.value.ipv6).toBeUndefined();
  });

  test("a bad address, a bad prefix or an MTU below IPv6's minimum is refused with the fix", () => {
    const bad = checkTunOptions({ ...base, ipv6: { address: "2001:db8::g", prefixLength: 64 } });
    expect(!bad.ok && bad.error.message).toContain("is not an IPv6 address");
    const prefix = checkTunOptions({ ...base, ipv6: { address: "2001:db8::1", prefixLength: 129 } });
    expect(!prefix.ok && prefix.error.message).toContain("from 1 to 128");
    const mtu = checkTunOptions({ ...base, mtu: 1200, ipv6: { address: "2001:db8::1", prefixLength: 64 } });
    expect(!mtu.ok && mtu.error.message).toContain("below 1280");
  });
});
