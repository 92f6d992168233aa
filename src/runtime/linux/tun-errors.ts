import { err, type Result } from "../../errors.ts";

/** The error codes openTun returns (documented on OpenTun in ../tun.ts). */
export type TunErrorCode = "tun_unavailable" | "tun_permission" | "tun_busy" | "tun_config_failed";

const ERRNO_NAMES: Record<number, string> = {
  1: "EPERM",
  2: "ENOENT",
  6: "ENXIO",
  13: "EACCES",
  16: "EBUSY",
  17: "EEXIST",
  19: "ENODEV",
  22: "EINVAL",
  24: "EMFILE",
};

export function errnoName(errno: number): string {
  return ERRNO_NAMES[errno] ?? `errno ${errno}`;
}

/** Classifies a failed syscall's errno (Linux numbering). */
export function tunErrorCode(errno: number): TunErrorCode {
  switch (errno) {
    case 2: // ENOENT: no /dev/net/tun node
    case 19: // ENODEV: node exists, tun module not loaded
    case 6: // ENXIO: same, older kernels
      return "tun_unavailable";
    case 1: // EPERM: no CAP_NET_ADMIN
    case 13: // EACCES: /dev/net/tun not accessible to this user
      return "tun_permission";
    case 16: // EBUSY: the name is attached to another fd
      return "tun_busy";
    default:
      return "tun_config_failed";
  }
}

const HINTS: Record<TunErrorCode, (name: string) => string> = {
  tun_unavailable: () =>
    "load the tun kernel module (modprobe tun) or run with access to /dev/net/tun " +
    "(containers: pass the device, e.g. --device /dev/net/tun)",
  tun_permission: () =>
    "run as root or grant CAP_NET_ADMIN (e.g. AmbientCapabilities=CAP_NET_ADMIN in the systemd unit)",
  tun_busy: (name) =>
    `interface ${name} is in use by another process or is not a TUN device: ` +
    `stop that process, delete the interface (ip link delete ${name}) or configure another name`,
  tun_config_failed: () => "check the tun settings (name, address, prefixLength, mtu)",
};

/**
 * Builds openTun's error for a failed step, e.g. step "open /dev/net/tun" or
 * "set MTU 1400 on gw0". `describe` turns an errno into text (strerror in production).
 */
export function tunError<T = never>(
  step: string,
  errno: number,
  name: string,
  describe: (errno: number) => string,
): Result<T> {
  const code = tunErrorCode(errno);
  return err(
    code,
    `cannot ${step}: ${describe(errno)} (${errnoName(errno)}); ${HINTS[code](name)}`,
    { errno, step },
  );
}
