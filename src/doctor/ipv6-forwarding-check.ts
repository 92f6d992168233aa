import type { Finding } from "./check.ts";
import { readText, type ReadText } from "./host-checks.ts";

/**
 * With an IPv6 pool (--pool6) the kernel must forward IPv6 too, or clients reach the gateway's
 * tunnel address but nothing behind it. IPv6 forwarding is its own switch, off by default.
 */
export function checkIpv6Forwarding(read: ReadText = readText): Finding {
  const check = "IPv6 forwarding";
  const path = "/proc/sys/net/ipv6/conf/all/forwarding";
  const value = read(path)?.trim();
  if (value === undefined) {
    return { check, status: "warn", detail: `cannot read ${path} (IPv6 disabled?)`, fix: "enable IPv6 on the gateway host, or start gw without --pool6" };
  }
  if (value === "1") return { check, status: "ok", detail: "net.ipv6.conf.all.forwarding = 1" };
  return {
    check,
    status: "warn",
    detail: "net.ipv6.conf.all.forwarding = 0: clients get IPv6 addresses but reach no IPv6 network behind the gateway",
    fix: "sysctl -w net.ipv6.conf.all.forwarding=1, and keep it with a line net.ipv6.conf.all.forwarding=1 in /etc/sysctl.d/90-gw.conf",
  };
}
