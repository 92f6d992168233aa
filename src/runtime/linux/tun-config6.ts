import { ok, type Result } from "../../errors.ts";
import { tunError } from "./tun-errors.ts";
import { AF_INET6, SOCK_CLOEXEC, SOCK_DGRAM, type TunLibc } from "./tun-libc.ts";

/**
 * The device's IPv6 address, with ioctls like the IPv4 one (no `ip` subprocess): SIOCSIFADDR on
 * an AF_INET6 socket takes a struct in6_ifreq (address, prefix length, interface index). The
 * kernel then routes the whole prefix to the device. TUN devices are IFF_NOARP, so the kernel
 * runs no duplicate address detection and the address is usable at once.
 */

const IFNAMSIZ = 16;
const IFREQ_SIZE = 40;
const IFR_UNION = 16;
const SIOCGIFINDEX = 0x8933;
const SIOCSIFADDR = 0x8916;
const IN6_IFREQ_SIZE = 24; // in6_addr[16], u32 prefixlen, int ifindex

export interface TunIpv6Settings {
  /** 16 bytes, network order. */
  address: Uint8Array;
  prefixLength: number;
  addressText: string;
}

/** Adds the IPv6 address to the (already up) interface. */
export function configureTunIpv6(libc: TunLibc, name: string, s: TunIpv6Settings): Result<void> {
  const describe = (e: number) => libc.strerror(e);
  const sock = libc.socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0) {
    return tunError(`open an IPv6 socket to configure ${name} (is IPv6 disabled on this host? start without --pool6)`, libc.errno(), name, describe);
  }
  try {
    const req = new Uint8Array(IFREQ_SIZE);
    new TextEncoder().encodeInto(name, req.subarray(0, IFNAMSIZ - 1));
    if (libc.ioctl(sock, SIOCGIFINDEX, req) !== 0) return tunError(`find the index of ${name}`, libc.errno(), name, describe);
    const index = new DataView(req.buffer).getInt32(IFR_UNION, true);
    const in6 = new Uint8Array(IN6_IFREQ_SIZE);
    in6.set(s.address, 0);
    const view = new DataView(in6.buffer);
    view.setUint32(16, s.prefixLength, true);
    view.setInt32(20, index, true);
    if (libc.ioctl(sock, SIOCSIFADDR, in6) !== 0) {
      const step = `set IPv6 address ${s.addressText}/${s.prefixLength} on ${name} (IPv6 must be enabled: sysctl net.ipv6.conf.all.disable_ipv6=0, or start without --pool6)`;
      return tunError(step, libc.errno(), name, describe);
    }
    return ok(undefined);
  } finally {
    libc.close(sock);
  }
}
