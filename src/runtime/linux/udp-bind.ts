import { err, ok, type Result } from "../../errors.ts";
import { EACCES, EADDRINUSE, EADDRNOTAVAIL, IPPROTO_IPV6, IPV6_V6ONLY, type ReuseportLibc, SOCK_CLOEXEC, SOCK_DGRAM, SOCK_NONBLOCK } from "./reuseport-libc.ts";
import { encodeSockaddr, SOCKADDR_BYTES, type SocketFamily } from "./sockaddr.ts";
import { AF_INET, AF_INET6 } from "./tun-libc.ts";

export type UdpBindLibc = Pick<ReuseportLibc, "socket" | "setIntOption" | "bind" | "getsockname" | "close" | "errno" | "strerror">;

/**
 * One UDP socket bound with libc (non-blocking, close-on-exec), for a runtime whose own UDP
 * socket is too slow for the data path and that reads the descriptor itself (deno/udp-socket.ts).
 * "::" takes IPv4 clients too, whatever net.ipv6.bindv6only says, as a steered group's members do.
 * Error codes as OpenUdp's: udp_port_in_use, udp_forbidden, udp_failed.
 */
export function bindUdp(libc: UdpBindLibc, host: string, port: number): Result<{ fd: number; port: number }> {
  const family: SocketFamily = host.includes(":") ? "IPv6" : "IPv4";
  const where = family === "IPv6" ? `UDP [${host}]:${port}` : `UDP ${host}:${port}`;
  if (!Number.isInteger(port) || port < 0 || port > 65535) return err("udp_failed", `${where}: not a port number (0 to 65535): fix the port`);
  const sockaddr = new Uint8Array(SOCKADDR_BYTES);
  const length = encodeSockaddr(sockaddr, host, family);
  if (length === 0) return err("udp_failed", `cannot bind ${where}: ${host} is not an IPv4 or IPv6 address (no names, no zone index): fix the listen address`);
  sockaddr[2] = (port >> 8) & 0xff;
  sockaddr[3] = port & 0xff;

  const fd = libc.socket(family === "IPv6" ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return err("udp_failed", `cannot open a UDP socket for ${where}: ${libc.strerror(libc.errno())}`);
  const failed = (what: string): Result<{ fd: number; port: number }> => {
    const errno = libc.errno();
    libc.close(fd);
    const because = `${what}: ${libc.strerror(errno)}`;
    if (errno === EADDRINUSE) return err("udp_port_in_use", `${where} is already in use (${because}): stop the other service, or start gw with --no-dtls`);
    if (errno === EACCES) return err("udp_forbidden", `not allowed to bind ${where} (${because}): run as root or grant CAP_NET_BIND_SERVICE`);
    if (errno === EADDRNOTAVAIL) return err("udp_failed", `cannot bind ${where}: ${host} is not an address of this machine (${because}): fix the listen address`);
    return err("udp_failed", `cannot bind ${where} (${because})`);
  };
  if (host === "::" && libc.setIntOption(fd, IPPROTO_IPV6, IPV6_V6ONLY, 0) !== 0) return failed("IPV6_V6ONLY 0");
  if (libc.bind(fd, sockaddr, length) !== 0) return failed("bind()");
  if (port !== 0) return ok({ fd, port });
  const bound = new Uint8Array(SOCKADDR_BYTES);
  if (libc.getsockname(fd, bound) !== 0) return failed("getsockname()");
  return ok({ fd, port: (bound[2]! << 8) | bound[3]! });
}
