import { accessSync, constants, readFileSync } from "node:fs";
import type { Finding } from "./check.ts";

/** CAP_NET_ADMIN is bit 12 of the capability sets (linux/capability.h). */
const CAP_NET_ADMIN = 12n;

/** Reads a file, or undefined when it cannot be read (not Linux, no permission). */
export type ReadText = (path: string) => string | undefined;

export const readText: ReadText = (path) => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
};

/** The TUN device node: gw serve opens /dev/net/tun for its one device. */
export function checkTunDevice(canOpen: (path: string) => boolean = openable): Finding {
  const check = "TUN device";
  if (canOpen("/dev/net/tun")) return { check, status: "ok", detail: "/dev/net/tun can be opened" };
  return {
    check,
    status: "fail",
    detail: "/dev/net/tun is missing or cannot be opened",
    fix: "modprobe tun (and add tun to /etc/modules-load.d/); in a container, pass the device: --device /dev/net/tun",
  };
}

function openable(path: string): boolean {
  try {
    accessSync(path, constants.R_OK | constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** CAP_NET_ADMIN in the effective set of the server (or of this shell when none runs). */
export function checkNetAdmin(status: string | undefined, whose: string): Finding {
  const check = "CAP_NET_ADMIN";
  const m = status ? /^CapEff:\s+([0-9a-f]+)$/m.exec(status) : null;
  if (!m) return { check, status: "warn", detail: `cannot read the capabilities of ${whose}`, fix: "run gw doctor on the gateway host (Linux)" };
  const effective = BigInt(`0x${m[1]}`);
  if ((effective >> CAP_NET_ADMIN) & 1n) return { check, status: "ok", detail: `${whose} has CAP_NET_ADMIN` };
  return {
    check,
    status: "fail",
    detail: `${whose} lacks CAP_NET_ADMIN: it cannot create the TUN device or set its address`,
    fix: "run gw serve as root, or under systemd with AmbientCapabilities=CAP_NET_ADMIN CAP_NET_BIND_SERVICE (see gw service install)",
  };
}

/** IPv4 forwarding: without it clients reach the gateway itself and nothing behind it. */
export function checkForwarding(read: ReadText = readText): Finding {
  const check = "IP forwarding";
  const value = read("/proc/sys/net/ipv4/ip_forward")?.trim();
  if (value === undefined) return { check, status: "warn", detail: "cannot read /proc/sys/net/ipv4/ip_forward", fix: "run gw doctor on the gateway host (Linux)" };
  if (value === "1") return { check, status: "ok", detail: "net.ipv4.ip_forward = 1" };
  return {
    check,
    status: "warn",
    detail: "net.ipv4.ip_forward = 0: clients reach the gateway but not the networks behind it",
    fix: "sysctl -w net.ipv4.ip_forward=1, and keep it with a line net.ipv4.ip_forward=1 in /etc/sysctl.d/90-gw.conf",
  };
}
