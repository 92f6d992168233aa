/**
 * One SO_REUSEPORT group of N sockets on the tunnel port (N TCP listeners or N UDP sockets), with
 * the steering program attached (reuseport-steering.ts): a client's packets go to member
 * steeringIndex(source address, N), the same member for its TCP and its UDP.
 *
 * The program returns a position in the group, and a socket's position is the order in which it
 * joined: UDP when it is bound, TCP when it starts listening; when one leaves, the last moves into
 * its slot. So the main process opens all N in order here and keeps them open for its whole life;
 * each worker gets a copy of its own member's fd, and a worker's death never reorders the group.
 * (Should the group shrink anyway, an index past its end makes the kernel fall back to its own
 * 4-tuple hash for that packet, so nothing is dropped, only unsteered.)
 *
 * The fds are made O_NONBLOCK and FD_CLOEXEC. Non-blocking is a flag of the open socket, shared by
 * every copy of it, and the event loops that adopt it need it. Close-on-exec is a flag of this
 * process's descriptor only: it keeps the sockets out of every helper the main process runs, while
 * handing one to a worker as an extra stdio entry dup2()s it into the child's slot, which clears
 * the flag on the child's copy.
 *
 * A member's bind never says port_in_use to a group of the same user: it joins it (tried on 6.18:
 * a second group on the same port succeeded, and its attach replaced the first one's program). So
 * before the members, a probe socket without SO_REUSEPORT binds the port and is closed again: it
 * fails with EADDRINUSE while anything holds the port (another gw's group included), which keeps a
 * second gw out as a plain listener would be kept out.
 */
import { err, ok, type Result } from "../../errors.ts";
import { encodeSockaddr, SOCKADDR_BYTES, type SocketFamily } from "./sockaddr.ts";
import { steeringProgram } from "./reuseport-steering.ts";
import {
  EACCES, EADDRINUSE, EADDRNOTAVAIL, IPPROTO_IPV6, IPV6_V6ONLY, type ReuseportLibc, SO_ATTACH_REUSEPORT_CBPF,
  SO_REUSEADDR, SO_REUSEPORT, SOCK_CLOEXEC, SOCK_DGRAM, SOCK_NONBLOCK, SOCK_STREAM, SOL_SOCKET,
} from "./reuseport-libc.ts";
import { AF_INET, AF_INET6 } from "./tun-libc.ts";

export interface SteeredGroupOptions {
  /** The address to bind: "0.0.0.0", "::" (dual-stack: IPv4 clients too), "127.0.0.1", a specific address. */
  host: string;
  /** The port; 0 lets the kernel choose one for the first member, and the others join it. */
  port: number;
  members: number;
  kind: "tcp" | "udp";
  /** TCP's accept queue per member; default 4096 (the kernel caps it at net.core.somaxconn). */
  backlog?: number;
}

export interface SteeredGroup {
  /** Member i's descriptor at index i: the index the program returns for a client. */
  fds: number[];
  /** The bound port (the chosen one when options.port was 0). */
  port: number;
}

const DEFAULT_BACKLOG = 4096;

export function openSteeredGroup(libc: ReuseportLibc, options: SteeredGroupOptions): Result<SteeredGroup> {
  const { host, kind, members } = options;
  const program = steeringProgram(members);
  if (!program.ok) return program;
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) {
    return err("steering_failed", `port ${options.port} is not a port number (0 to 65535): fix the listen port`);
  }
  const family: SocketFamily = host.includes(":") ? "IPv6" : "IPv4";
  const sockaddr = new Uint8Array(SOCKADDR_BYTES);
  const length = encodeSockaddr(sockaddr, host, family);
  if (length === 0) {
    return err("listen_address_invalid", `${host} is not an IPv4 or IPv6 address (no names, no zone index): fix the listen address`);
  }

  const fds: number[] = [];
  const fail = (code: string, message: string): Result<SteeredGroup> => {
    for (const fd of fds) libc.close(fd);
    return err(code, message);
  };
  const where = (port: number) => `${kind.toUpperCase()} ${family === "IPv6" ? `[${host}]` : host}:${port}`;
  const failed = (what: string, port: number): Result<SteeredGroup> => {
    const errno = libc.errno();
    const because = `${libc.strerror(errno)} (errno ${errno})`;
    if (errno === EADDRINUSE) {
      return fail("port_in_use", `${where(port)} is already in use (${what}: ${because}): stop the other service or gw instance using it, or choose another port`);
    }
    if (errno === EACCES) {
      return fail("port_forbidden", `${where(port)}: ${what} was refused (${because}): ports below 1024 need root or CAP_NET_BIND_SERVICE`);
    }
    if (errno === EADDRNOTAVAIL) {
      return fail("listen_address_unavailable", `${where(port)}: ${host} is not an address of this machine (${what}: ${because}): fix the listen address`);
    }
    return fail("steering_failed", `${where(port)}: ${what} failed (${because}): the workers' shared port cannot be set up; check the kernel (SO_REUSEPORT, classic BPF) and the address`);
  };

  // Members join any group already on the port (see the module comment): ask the kernel first
  // whether anyone holds it, with a socket that cannot join.
  if (options.port !== 0) {
    const probe = libc.socket(family === "IPv6" ? AF_INET6 : AF_INET, (kind === "tcp" ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
    if (probe < 0) return failed("socket()", options.port);
    fds.push(probe);
    // TCP: connections of a gw that just stopped, in TIME_WAIT, do not hold the port; a listener does.
    if (kind === "tcp" && libc.setIntOption(probe, SOL_SOCKET, SO_REUSEADDR, 1) !== 0) return failed("SO_REUSEADDR", options.port);
    if (host === "::" && libc.setIntOption(probe, IPPROTO_IPV6, IPV6_V6ONLY, 0) !== 0) return failed("IPV6_V6ONLY 0", options.port);
    sockaddr[2] = (options.port >> 8) & 0xff;
    sockaddr[3] = options.port & 0xff;
    if (libc.bind(probe, sockaddr, length) !== 0) return failed("bind() of a probe without SO_REUSEPORT", options.port);
    fds.pop();
    libc.close(probe);
  }

  let port = options.port;
  for (let member = 0; member < members; member++) {
    const fd = libc.socket(family === "IPv6" ? AF_INET6 : AF_INET, (kind === "tcp" ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return failed("socket()", port);
    fds.push(fd);
    if (libc.setIntOption(fd, SOL_SOCKET, SO_REUSEPORT, 1) !== 0) return failed("SO_REUSEPORT", port);
    // TCP: a restarted gw binds again while its old connections are in TIME_WAIT.
    if (kind === "tcp" && libc.setIntOption(fd, SOL_SOCKET, SO_REUSEADDR, 1) !== 0) return failed("SO_REUSEADDR", port);
    // "::" takes IPv4 clients too, whatever net.ipv6.bindv6only says.
    if (host === "::" && libc.setIntOption(fd, IPPROTO_IPV6, IPV6_V6ONLY, 0) !== 0) return failed("IPV6_V6ONLY 0", port);
    sockaddr[2] = (port >> 8) & 0xff;
    sockaddr[3] = port & 0xff;
    if (libc.bind(fd, sockaddr, length) !== 0) return failed("bind()", port);
    if (port === 0) {
      const bound = new Uint8Array(SOCKADDR_BYTES);
      if (libc.getsockname(fd, bound) !== 0) return failed("getsockname()", port);
      port = (bound[2]! << 8) | bound[3]!;
    }
  }
  // TCP members join the group in the order they listen: listen in fd order, after all are bound.
  if (kind === "tcp") {
    for (const fd of fds) if (libc.listen(fd, options.backlog ?? DEFAULT_BACKLOG) !== 0) return failed("listen()", port);
  }
  // One attach serves the whole group (the program belongs to the group, not to the socket).
  if (libc.attachFilter(fds[0]!, SO_ATTACH_REUSEPORT_CBPF, program.value) !== 0) return failed("SO_ATTACH_REUSEPORT_CBPF", port);
  return ok({ fds, port });
}

/** Closes every member (the main process at shutdown; a failed start). */
export function closeSteeredGroup(libc: ReuseportLibc, group: SteeredGroup): void {
  for (const fd of group.fds) libc.close(fd);
}
