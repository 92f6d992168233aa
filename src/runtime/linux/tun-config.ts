import { err, ok, type Result } from "../../errors.ts";
import type { TunOptions } from "../tun.ts";
import { tunError } from "./tun-errors.ts";
import { ipv6Bytes, parseIpv6 } from "../../net/ipv6.ts";
import type { TunIpv6Settings } from "./tun-config6.ts";
import { AF_INET, O_CLOEXEC, O_NONBLOCK, O_RDWR, SOCK_CLOEXEC, SOCK_DGRAM, type TunLibc } from "./tun-libc.ts";

/** Creating and configuring the interface with ioctls (no `ip` subprocess). Linux only. */

const TUN_PATH = "/dev/net/tun";
const IFNAMSIZ = 16;
const IFREQ_SIZE = 40; // struct ifreq on 64-bit Linux: name[16] + 24-byte union
const IFR_UNION = 16;
const TUNSETIFF = 0x400454ca; // _IOW('T', 202, int)
const TUNSETOFFLOAD = 0x400454d0; // _IOW('T', 208, unsigned int)
/** TUNSETOFFLOAD flags: checksums left to complete, TCP segmentation offload for IPv4 and IPv6. */
const TUN_F_CSUM = 0x01;
const TUN_F_TSO4 = 0x02;
const TUN_F_TSO6 = 0x04;
const IFF_TUN = 0x0001;
const IFF_NO_PI = 0x1000;
const IFF_VNET_HDR = 0x4000;
const IFF_MULTI_QUEUE = 0x0100;
const SIOCSIFADDR = 0x8916;
const SIOCSIFNETMASK = 0x891c;
const SIOCSIFMTU = 0x8922;
const SIOCGIFFLAGS = 0x8913;
const SIOCSIFFLAGS = 0x8914;
const IFF_UP = 0x1;
const IFF_RUNNING = 0x40;
const MIN_MTU = 68; // smallest MTU IPv4 allows
const MAX_MTU = 65535;

/** Options checked and converted to the bytes the ioctls take. */
export interface TunSettings {
  name: string;
  address: Uint8Array; // 4 bytes, network order
  netmask: Uint8Array;
  prefixLength: number;
  mtu: number;
  addressText: string;
  ipv6?: TunIpv6Settings;
}

export function checkTunOptions(o: TunOptions): Result<TunSettings> {
  const nameBytes = new TextEncoder().encode(o.name).length;
  if (nameBytes === 0 || nameBytes >= IFNAMSIZ || o.name.includes("\0")) {
    return err("tun_config_failed", `tun name "${o.name}" must be 1 to ${IFNAMSIZ - 1} bytes`);
  }
  const address = parseIpv4(o.address);
  if (!address) {
    return err("tun_config_failed", `tun address "${o.address}" is not a dotted IPv4 address`);
  }
  if (!Number.isInteger(o.prefixLength) || o.prefixLength < 1 || o.prefixLength > 32) {
    return err("tun_config_failed", `tun prefixLength ${o.prefixLength} must be an integer from 1 to 32`);
  }
  if (!Number.isInteger(o.mtu) || o.mtu < MIN_MTU || o.mtu > MAX_MTU) {
    return err("tun_config_failed", `tun mtu ${o.mtu} must be an integer from ${MIN_MTU} to ${MAX_MTU}`);
  }
  const netmask = prefixToMask(o.prefixLength);
  const settings: TunSettings = { name: o.name, address, netmask, prefixLength: o.prefixLength, mtu: o.mtu, addressText: o.address };
  if (o.ipv6) {
    const address6 = parseIpv6(o.ipv6.address);
    if (!address6) return err("tun_config_failed", `tun IPv6 address "${o.ipv6.address}" is not an IPv6 address`);
    const length = o.ipv6.prefixLength;
    if (!Number.isInteger(length) || length < 1 || length > 128) {
      return err("tun_config_failed", `tun IPv6 prefixLength ${length} must be an integer from 1 to 128`);
    }
    if (o.mtu < 1280) return err("tun_config_failed", `tun mtu ${o.mtu} is below 1280, the smallest MTU IPv6 allows: raise --mtu or start without --pool6`);
    settings.ipv6 = { address: ipv6Bytes(address6), prefixLength: length, addressText: o.ipv6.address };
  }
  return ok(settings);
}

function parseIpv4(text: string): Uint8Array | null {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255)) {
    return null;
  }
  return Uint8Array.from(parts, Number);
}

function prefixToMask(prefixLength: number): Uint8Array {
  const mask = (0xffffffff << (32 - prefixLength)) >>> 0; // prefixLength is 1..32
  return Uint8Array.of(mask >>> 24, (mask >>> 16) & 0xff, (mask >>> 8) & 0xff, mask & 0xff);
}

function ifreq(name: string): Uint8Array {
  const req = new Uint8Array(IFREQ_SIZE);
  new TextEncoder().encodeInto(name, req.subarray(0, IFNAMSIZ - 1));
  return req;
}

function ifreqName(req: Uint8Array): string {
  const end = req.indexOf(0);
  return new TextDecoder().decode(req.subarray(0, end < 0 || end > IFNAMSIZ ? IFNAMSIZ : end));
}

/**
 * Opens /dev/net/tun and attaches it to the named interface (created if missing). With
 * `vnetHeader`, every read and write carries a virtio-net header (IFF_VNET_HDR), which lets a
 * write hand the kernel many TCP segments at once; a kernel that refuses the flag gets the
 * device without it (`vnetHeader: false` in the result).
 *
 * With `multiQueue` (IFF_MULTI_QUEUE) each call on the same name attaches one more queue of the
 * same device, and there is no fallback: the kernel applies each TUNSETIFF's flags to the whole
 * device, so every queue must ask for exactly the flags the first one got.
 */
export function attachTun(
  libc: TunLibc,
  name: string,
  o: { vnetHeader: boolean; multiQueue?: boolean },
): Result<{ fd: number; name: string; vnetHeader: boolean; readOffload: boolean }> {
  const describe = (e: number) => libc.strerror(e);
  const fd = libc.open(TUN_PATH, O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return tunError(`open ${TUN_PATH}`, libc.errno(), name, describe);
  const queueFlag = o.multiQueue ? IFF_MULTI_QUEUE : 0;
  const attach = (flags: number) => {
    const req = ifreq(name);
    new DataView(req.buffer).setUint16(IFR_UNION, flags | queueFlag, true);
    return libc.ioctl(fd, TUNSETIFF, req) === 0 ? req : null;
  };
  const withHeader = o.vnetHeader ? attach(IFF_TUN | IFF_NO_PI | IFF_VNET_HDR) : null;
  const req = withHeader ?? (o.vnetHeader && o.multiQueue ? null : attach(IFF_TUN | IFF_NO_PI));
  if (!req) {
    const e = libc.errno();
    libc.close(fd);
    return tunError(`create TUN interface ${name} (TUNSETIFF)`, e, name, describe);
  }
  const readOffload = withHeader !== null && enableReadOffload(libc, fd);
  return ok({ fd, name: ifreqName(req), vnetHeader: withHeader !== null, readOffload });
}

/**
 * Lets the kernel hand a read over as it forwarded it (TUNSETOFFLOAD): a TCP stream's segments as
 * one GSO super-packet of up to 64 KiB, and checksums left to complete. One read and one pass
 * through the kernel's forwarding then carry up to 45 segments; the reader cuts them
 * (tcp-segmenter.ts), as wireguard-go does. The flags are the device's, so every queue of a
 * multi-queue device may ask again. False when the kernel or the runtime's binding cannot: reads
 * stay one packet each.
 */
function enableReadOffload(libc: TunLibc, fd: number): boolean {
  return libc.ioctlValue !== undefined && libc.ioctlValue(fd, TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6) === 0;
}

/**
 * Address, netmask, MTU, then link up, on a throwaway AF_INET socket. The link comes up last:
 * while it is down the kernel installs no route, so the classful mask SIOCSIFADDR implies never
 * routes anything. Once up with address+netmask, the kernel adds the connected route for the pool.
 */
export function configureTun(libc: TunLibc, s: TunSettings): Result<void> {
  const describe = (e: number) => libc.strerror(e);
  const sock = libc.socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0) return tunError("open a socket to configure the interface", libc.errno(), s.name, describe);
  try {
    const steps: [string, number, Uint8Array][] = [
      [`set address ${s.addressText} on ${s.name}`, SIOCSIFADDR, sockaddrReq(s.name, s.address)],
      [`set netmask /${s.prefixLength} on ${s.name}`, SIOCSIFNETMASK, sockaddrReq(s.name, s.netmask)],
      [`set MTU ${s.mtu} on ${s.name}`, SIOCSIFMTU, intReq(s.name, s.mtu)],
    ];
    for (const [step, request, req] of steps) {
      if (libc.ioctl(sock, request, req) !== 0) return tunError(step, libc.errno(), s.name, describe);
    }
    const flags = ifreq(s.name);
    if (libc.ioctl(sock, SIOCGIFFLAGS, flags) !== 0) {
      return tunError(`read the flags of ${s.name}`, libc.errno(), s.name, describe);
    }
    const view = new DataView(flags.buffer);
    view.setUint16(IFR_UNION, view.getUint16(IFR_UNION, true) | IFF_UP | IFF_RUNNING, true);
    if (libc.ioctl(sock, SIOCSIFFLAGS, flags) !== 0) {
      return tunError(`bring ${s.name} up`, libc.errno(), s.name, describe);
    }
    return ok(undefined);
  } finally {
    libc.close(sock);
  }
}

/** ifreq carrying a struct sockaddr_in (family in host order, address in network order). */
function sockaddrReq(name: string, addr: Uint8Array): Uint8Array {
  const req = ifreq(name);
  new DataView(req.buffer).setUint16(IFR_UNION, AF_INET, true);
  req.set(addr, IFR_UNION + 4);
  return req;
}

function intReq(name: string, value: number): Uint8Array {
  const req = ifreq(name);
  new DataView(req.buffer).setInt32(IFR_UNION, value, true);
  return req;
}
