import { describe, expect, test } from "bun:test";
import { HeaderList } from "../../../src/front/http-head.ts";
import { cstpHeaders, negotiateTunnel, type TunnelDefaults } from "../../../src/tunnel/tunnel-params.ts";
import { parseIpv4 } from "../../../src/net/ipv4.ts";
import { compilePolicy } from "../../../src/control/group-policy.ts";

const defaults: TunnelDefaults = { mtu: 1400, dpdSeconds: 30, keepaliveSeconds: 20, mobileDpdSeconds: 600, poolPrefixLength: 24, serverName: "gw test" };
const policy = compilePolicy({ routes: ["198.51.100.0/24"], excludeRoutes: ["198.51.100.128/25"], dns: ["198.51.100.53"], defaultDomain: "corp.example" });
const address = parseIpv4("10.10.0.9")!;
const headers = (h: Record<string, string>) => new HeaderList(Object.entries(h));

describe("negotiateTunnel and the CONNECT headers", () => {
  test("the client's MTU is honoured within [576, configured]", () => {
    expect(negotiateTunnel(headers({ "X-CSTP-MTU": "1290" }), address, policy, defaults).mtu).toBe(1290);
    expect(negotiateTunnel(headers({ "X-CSTP-MTU": "65000" }), address, policy, defaults).mtu).toBe(1400);
    expect(negotiateTunnel(headers({ "X-CSTP-MTU": "100" }), address, policy, defaults).mtu).toBe(1400);
    expect(negotiateTunnel(headers({ "X-CSTP-MTU": "junk" }), address, policy, defaults).mtu).toBe(1400);
    expect(negotiateTunnel(headers({}), address, { ...policy, mtu: 1300 }, defaults).mtu).toBe(1300);
  });

  test("the spec's headers, with exact names (openconnect matches them case-sensitively)", () => {
    const h = cstpHeaders(negotiateTunnel(headers({ "X-CSTP-MTU": "1300" }), address, policy, defaults));
    expect(h).toEqual([
      ["X-CSTP-Version", "1"],
      ["X-CSTP-Server-Name", "gw test"],
      ["X-CSTP-Address", "10.10.0.9"],
      ["X-CSTP-Netmask", "255.255.255.0"],
      ["X-CSTP-DNS", "198.51.100.53"],
      ["X-CSTP-Default-Domain", "corp.example"],
      ["X-CSTP-Split-Include", "198.51.100.0/255.255.255.0"],
      ["X-CSTP-Split-Exclude", "198.51.100.128/255.255.255.128"],
      ["X-CSTP-MTU", "1300"],
      ["X-CSTP-DPD", "30"],
      ["X-CSTP-Keepalive", "20"],
      ["X-CSTP-Idle-Timeout", "none"],
    ]);
  });

  test("mobile clients get the mobile DPD, also as X-CSTP-DPD (openconnect reads only that)", () => {
    for (const h of [{ "X-AnyConnect-Identifier-Platform": "android" }, { "User-Agent": "Cisco AnyConnect VPN Agent for Apple iPhone 5.1" }] as Record<string, string>[]) {
      const sent = new Map(cstpHeaders(negotiateTunnel(headers(h), address, policy, defaults)));
      expect(sent.get("X-CSTP-DPD")).toBe("600");
      expect(sent.get("X-CSTP-Mobile-DPD")).toBe("600");
    }
    const desktop = new Map(cstpHeaders(negotiateTunnel(headers({ "User-Agent": "Open AnyConnect VPN Agent v9.01-3" }), address, policy, defaults)));
    expect(desktop.has("X-CSTP-Mobile-DPD")).toBe(false);
  });
});
