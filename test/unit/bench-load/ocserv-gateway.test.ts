import { describe, expect, test } from "bun:test";
import { ipv4PoolLines, ocservConfig } from "../../../scripts/bench/load/ocserv-gateway.ts";

describe("ocserv under the load generator: its configuration", () => {
  test("gw's pool as ocserv's network and netmask", () => {
    expect(ipv4PoolLines("10.64.0.0/20")).toEqual(["ipv4-network = 10.64.0.0", "ipv4-netmask = 255.255.240.0"]);
    expect(ipv4PoolLines("10.64.0.0/12")).toEqual(["ipv4-network = 10.64.0.0", "ipv4-netmask = 255.240.0.0"]);
    expect(ipv4PoolLines("192.0.2.0/24")).toEqual(["ipv4-network = 192.0.2.0", "ipv4-netmask = 255.255.255.0"]);
    expect(() => ipv4PoolLines("10.64.0.0")).toThrow(/not an IPv4 pool/);
    expect(() => ipv4PoolLines("10.64.0.0/0")).toThrow(/not an IPv4 pool/);
  });

  test("the same clients' timers as gw's, no client limit, everything in the given directory", () => {
    const text = ocservConfig({ dir: "/tmp/oc", users: ["load0"], password: "p", pool: "10.64.0.0/20", route: "198.51.100.0/24", dpdSeconds: 30, keepaliveSeconds: 20 }, "203.0.113.1");
    const lines = text.split("\n");
    for (const line of ["dpd = 30", "keepalive = 20", "max-clients = 0", "max-same-clients = 0", "listen-host = 203.0.113.1", "route = 198.51.100.0/24", "ipv4-netmask = 255.255.240.0"]) {
      expect(lines).toContain(line);
    }
    // Every file it names lives in the directory given (nothing of the package's /etc/ocserv).
    const paths = [...text.matchAll(/(?:= "?|passwd=)(\/[^\s"\]]+)/g)].map((m) => m[1]!);
    expect(paths.length).toBeGreaterThan(4);
    for (const path of paths) expect(path.startsWith("/tmp/oc/")).toBe(true);
  });
});
