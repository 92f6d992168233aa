import { describe, expect, test } from "bun:test";
import { checkIpv6Forwarding } from "../../../src/doctor/ipv6-forwarding-check.ts";

describe("IPv6 forwarding (checked with --pool6)", () => {
  test("off is a warning with the sysctl fix; unreadable says IPv6 may be off", () => {
    expect(checkIpv6Forwarding(() => "1\n").status).toBe("ok");
    const off = checkIpv6Forwarding(() => "0\n");
    expect(off.status).toBe("warn");
    expect(off.fix).toContain("sysctl -w net.ipv6.conf.all.forwarding=1");
    const unreadable = checkIpv6Forwarding(() => undefined);
    expect(unreadable.status).toBe("warn");
    expect(unreadable.fix).toContain("without --pool6");
  });
});
