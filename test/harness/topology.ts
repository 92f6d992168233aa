import { execFileSync } from "node:child_process";

/**
 * Three network namespaces, as in shared/bench (documentation ranges only):
 *   client 203.0.113.2 --- 203.0.113.1 gateway 198.51.100.1 --- 198.51.100.2 lan
 * The client has no default route: nothing can leave the namespaces. Names carry a unique
 * prefix so parallel runs and leftovers never collide.
 */
export interface Topology {
  client: string;
  gateway: string;
  lan: string;
  gatewayOutside: string;
  /** The client's veth (a second address can be added to it: 203.0.113.3). */
  clientInterface: string;
  lanHost: string;
  /** With `ipv6: true`: the same links carry IPv6 too (client 2001:db8:1::2, LAN host 2001:db8:2::2). */
  gatewayOutside6?: string;
  lanHost6?: string;
  /** argv prefix running a command inside a namespace. */
  exec(ns: string): string[];
  destroy(): void;
}

/**
 * `ipv6: true` adds IPv6 (documentation range 2001:db8::/32) beside IPv4 on the same links:
 *   client 2001:db8:1::2 --- 2001:db8:1::1 gateway 2001:db8:2::1 --- 2001:db8:2::2 lan
 * with forwarding on in the gateway and duplicate address detection off (no waiting for it).
 */
export function createTopology(tag: string, o: { ipv6?: boolean } = {}): Topology {
  const prefix = `gwe${tag}${process.pid % 100000}`;
  const ns = { client: `${prefix}-c`, gateway: `${prefix}-g`, lan: `${prefix}-l` };
  const ip = (...args: string[]) => execFileSync("ip", args, { stdio: ["ignore", "ignore", "pipe"] });
  const topology: Topology = {
    ...ns,
    gatewayOutside: "203.0.113.1",
    clientInterface: `${prefix}c`,
    lanHost: "198.51.100.2",
    exec: (name) => ["ip", "netns", "exec", name],
    destroy() {
      for (const name of Object.values(ns)) {
        // Stop anything still running inside before the namespace goes (by PID, ours only).
        try {
          const pids = execFileSync("ip", ["netns", "pids", name], { encoding: "utf8" }).split(/\s+/).filter(Boolean);
          for (const pid of pids) process.kill(Number(pid), "SIGKILL");
        } catch {}
        try {
          ip("netns", "del", name);
        } catch {}
      }
    },
  };
  try {
    for (const name of Object.values(ns)) {
      ip("netns", "add", name);
      ip("-n", name, "link", "set", "lo", "up");
    }
    ip("-n", ns.client, "link", "add", `${prefix}c`, "type", "veth", "peer", "name", `${prefix}o`, "netns", ns.gateway);
    ip("-n", ns.gateway, "link", "add", `${prefix}i`, "type", "veth", "peer", "name", `${prefix}l`, "netns", ns.lan);
    ip("-n", ns.client, "addr", "add", "203.0.113.2/24", "dev", `${prefix}c`);
    ip("-n", ns.gateway, "addr", "add", "203.0.113.1/24", "dev", `${prefix}o`);
    ip("-n", ns.gateway, "addr", "add", "198.51.100.1/24", "dev", `${prefix}i`);
    ip("-n", ns.lan, "addr", "add", "198.51.100.2/24", "dev", `${prefix}l`);
    ip("-n", ns.client, "link", "set", `${prefix}c`, "up");
    ip("-n", ns.gateway, "link", "set", `${prefix}o`, "up");
    ip("-n", ns.gateway, "link", "set", `${prefix}i`, "up");
    ip("-n", ns.lan, "link", "set", `${prefix}l`, "up");
    ip("-n", ns.lan, "route", "add", "default", "via", "198.51.100.1");
    execFileSync("ip", ["netns", "exec", ns.gateway, "sysctl", "-qw", "net.ipv4.ip_forward=1"]);
    if (o.ipv6) {
      execFileSync("ip", ["netns", "exec", ns.gateway, "sysctl", "-qw", "net.ipv6.conf.all.forwarding=1"]);
      ip("-n", ns.client, "-6", "addr", "add", "2001:db8:1::2/64", "dev", `${prefix}c`, "nodad");
      ip("-n", ns.gateway, "-6", "addr", "add", "2001:db8:1::1/64", "dev", `${prefix}o`, "nodad");
      ip("-n", ns.gateway, "-6", "addr", "add", "2001:db8:2::1/64", "dev", `${prefix}i`, "nodad");
      ip("-n", ns.lan, "-6", "addr", "add", "2001:db8:2::2/64", "dev", `${prefix}l`, "nodad");
      ip("-n", ns.lan, "-6", "route", "add", "default", "via", "2001:db8:2::1");
      topology.gatewayOutside6 = "2001:db8:1::1";
      topology.lanHost6 = "2001:db8:2::2";
    }
  } catch (e) {
    topology.destroy();
    throw e;
  }
  return topology;
}

/**
 * A namespace with only loopback up, for tests that run gw alone (startup, settings). Forwarding
 * is on, as on a gateway host (gw serve warns when it is off); `forwarding: false` leaves it off.
 */
export function createLoopbackNamespace(tag: string, o: { forwarding?: boolean } = {}): { name: string; destroy(): void } {
  const name = `gw${tag}${process.pid % 100000}`;
  execFileSync("ip", ["netns", "add", name]);
  execFileSync("ip", ["-n", name, "link", "set", "lo", "up"]);
  if (o.forwarding !== false) execFileSync("ip", ["netns", "exec", name, "sysctl", "-qw", "net.ipv4.ip_forward=1"]);
  return {
    name,
    destroy() {
      try {
        execFileSync("ip", ["netns", "del", name]);
      } catch {}
    },
  };
}

/**
 * Waits (at most `timeoutMs`) until no address in `ns` is still tentative: link-local IPv6
 * addresses (veths, a TUN the gateway just brought up) finish duplicate address detection about
 * a second after the link comes up, and Chromium reads that change as ERR_NETWORK_CHANGED on
 * whatever page is loading then.
 */
export async function waitAddressesSettled(ns: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const tentative = execFileSync("ip", ["-n", ns, "-6", "addr", "show", "tentative"], { encoding: "utf8" }).trim();
    if (tentative === "") return;
    await new Promise((r) => setTimeout(r, 100));
  }
}
