import { describe, expect, test } from "bun:test";
import { openSteeredGroup, type SteeredGroupOptions } from "../../../../src/runtime/linux/steered-group.ts";
import {
  EADDRINUSE, EADDRNOTAVAIL, EACCES, IPPROTO_IPV6, IPV6_V6ONLY, type ReuseportLibc, SO_ATTACH_REUSEPORT_CBPF,
  SO_REUSEPORT, SOCK_CLOEXEC, SOCK_NONBLOCK, SOL_SOCKET,
} from "../../../../src/runtime/linux/reuseport-libc.ts";
import { steeringProgram } from "../../../../src/runtime/linux/reuseport-steering.ts";

/** A libc that records its calls and fails the call named in `failOn` with `errno`. */
function fakeLibc(failOn = "", errno = 0, boundPort = 40000) {
  const calls: string[] = [];
  const closed: number[] = [];
  let next = 10;
  let attached: Uint8Array | null = null;
  const result = (name: string) => (name === failOn ? -1 : 0);
  const libc: ReuseportLibc = {
    socket: (domain, type) => {
      calls.push(`socket ${domain} ${type}`);
      return failOn === "socket" ? -1 : next++;
    },
    setIntOption: (fd, level, name, value) => {
      calls.push(`setsockopt ${fd} ${level} ${name} ${value}`);
      return result(`setsockopt ${name}`);
    },
    attachFilter: (fd, name, program) => {
      calls.push(`attach ${fd} ${name}`);
      attached = program;
      return result("attach");
    },
    bind: (fd, sockaddr) => {
      calls.push(`bind ${fd} port ${(sockaddr[2]! << 8) | sockaddr[3]!}`);
      return result("bind");
    },
    listen: (fd, backlog) => {
      calls.push(`listen ${fd} ${backlog}`);
      return result("listen");
    },
    getsockname: (_fd, sockaddr) => {
      sockaddr[2] = boundPort >> 8;
      sockaddr[3] = boundPort & 0xff;
      return 0;
    },
    close: (fd) => {
      closed.push(fd);
      return 0;
    },
    errno: () => errno,
    strerror: (e) => `strerror ${e}`,
  };
  return { libc, calls, closed, attached: () => attached };
}

const options = (o: Partial<SteeredGroupOptions> = {}): SteeredGroupOptions => ({ host: "127.0.0.1", port: 443, members: 3, kind: "tcp", ...o });

describe("openSteeredGroup", () => {
  test("TCP: binds every member, then listens in fd order, then attaches the program once", () => {
    const fake = fakeLibc();
    const group = openSteeredGroup(fake.libc, options());
    expect(group.ok).toBe(true);
    if (!group.ok) return;
    // Descriptor 10 is the probe that checks the port is free: bound without SO_REUSEPORT, then closed.
    expect(group.value).toEqual({ fds: [11, 12, 13], port: 443 });
    expect(fake.calls[0]).toBe(`socket 2 ${1 | SOCK_CLOEXEC}`);
    expect(fake.calls.some((c) => c.startsWith(`setsockopt 10 ${SOL_SOCKET} ${SO_REUSEPORT}`))).toBe(false);
    expect(fake.closed).toEqual([10]);
    const order = fake.calls.filter((c) => /^(bind|listen|attach)/.test(c));
    expect(order).toEqual(["bind 10 port 443", "bind 11 port 443", "bind 12 port 443", "bind 13 port 443", "listen 11 4096", "listen 12 4096", "listen 13 4096", `attach 11 ${SO_ATTACH_REUSEPORT_CBPF}`]);
    expect(fake.calls).toContain(`setsockopt 12 ${SOL_SOCKET} ${SO_REUSEPORT} 1`);
    expect(fake.calls[fake.calls.indexOf("bind 10 port 443") + 1]).toBe(`socket 2 ${1 | SOCK_NONBLOCK | SOCK_CLOEXEC}`);
    const expected = steeringProgram(3);
    expect(expected.ok && fake.attached()).toEqual(expected.ok ? expected.value : null);
  });

  test("UDP: no listen; port 0 takes the first member's port for the others", () => {
    const fake = fakeLibc("", 0, 41234);
    const group = openSteeredGroup(fake.libc, options({ kind: "udp", port: 0, members: 2 }));
    expect(group.ok && group.value).toEqual({ fds: [10, 11], port: 41234 });
    expect(fake.calls.filter((c) => c.startsWith("bind"))).toEqual(["bind 10 port 0", "bind 11 port 41234"]);
    expect(fake.calls.some((c) => c.startsWith("listen"))).toBe(false);
    expect(fake.calls[0]).toBe(`socket 2 ${2 | SOCK_NONBLOCK | SOCK_CLOEXEC}`);
  });

  test(":: is IPv6 and dual-stack; a specific IPv6 address keeps the system default", () => {
    const any = fakeLibc();
    expect(openSteeredGroup(any.libc, options({ host: "::", members: 1 })).ok).toBe(true);
    expect(any.calls[0]!.startsWith("socket 10 ")).toBe(true);
    // The probe too: it must collide with IPv4 holders of the port as the members would.
    expect(any.calls).toContain(`setsockopt 10 ${IPPROTO_IPV6} ${IPV6_V6ONLY} 0`);
    expect(any.calls).toContain(`setsockopt 11 ${IPPROTO_IPV6} ${IPV6_V6ONLY} 0`);
    const one = fakeLibc();
    expect(openSteeredGroup(one.libc, options({ host: "2001:db8::1", members: 1 })).ok).toBe(true);
    expect(one.calls.some((c) => c.includes(` ${IPPROTO_IPV6} ${IPV6_V6ONLY} `))).toBe(false);
  });

  test("errno becomes a code with an operator message, and every member opened so far is closed", () => {
    const cases: [string, number, string, string][] = [
      ["bind", EADDRINUSE, "port_in_use", "already in use"],
      ["bind", EACCES, "port_forbidden", "CAP_NET_BIND_SERVICE"],
      ["bind", EADDRNOTAVAIL, "listen_address_unavailable", "not an address of this machine"],
      ["attach", 22, "steering_failed", "SO_ATTACH_REUSEPORT_CBPF failed (strerror 22 (errno 22))"],
      ["listen", 98, "port_in_use", "listen()"],
    ];
    for (const [failOn, errno, code, text] of cases) {
      const fake = fakeLibc(failOn, errno);
      const group = openSteeredGroup(fake.libc, options());
      expect(group.ok).toBe(false);
      if (group.ok) continue;
      expect(group.error.code).toBe(code);
      expect(group.error.message).toContain(text);
      expect(group.error.message).toContain("TCP 127.0.0.1:443");
      // A failing bind is the probe's (nothing else made); later failures close the members made.
      expect(fake.closed).toEqual(failOn === "bind" ? [10] : [10, 11, 12, 13]);
    }
  });

  test("a port anyone holds is port_in_use before any member joins it (a member would join another gw's group)", () => {
    for (const kind of ["tcp", "udp"] as const) {
      const fake = fakeLibc("bind", EADDRINUSE);
      const group = openSteeredGroup(fake.libc, options({ kind }));
      expect(!group.ok && group.error.code).toBe("port_in_use");
      expect(fake.calls.filter((c) => c.startsWith("socket"))).toHaveLength(1);
      expect(fake.calls.some((c) => c.includes(` ${SO_REUSEPORT} `))).toBe(false);
    }
  });

  test("bad input is refused before any socket is made", () => {
    for (const [o, code] of [
      [options({ host: "gw.example" }), "listen_address_invalid"],
      [options({ members: 0 }), "steering_failed"],
      [options({ port: 70000 }), "steering_failed"],
    ] as const) {
      const fake = fakeLibc();
      const group = openSteeredGroup(fake.libc, o);
      expect(!group.ok && group.error.code).toBe(code);
      expect(fake.calls).toEqual([]);
    }
  });
});
