import { describe, expect, test } from "bun:test";
import { bindUdp, type UdpBindLibc } from "../../../../src/runtime/linux/udp-bind.ts";
import { EACCES, EADDRINUSE, EADDRNOTAVAIL, IPPROTO_IPV6, IPV6_V6ONLY, SOCK_CLOEXEC, SOCK_DGRAM, SOCK_NONBLOCK } from "../../../../src/runtime/linux/reuseport-libc.ts";
import { AF_INET, AF_INET6 } from "../../../../src/runtime/linux/tun-libc.ts";

/** A libc that records the calls and fails the one named, with the errno given. */
function fakeLibc(failing?: { call: "socket" | "bind" | "getsockname" | "setsockopt"; errno: number }, chosenPort = 40000) {
  const calls: string[] = [];
  let errno = 0;
  const fail = (call: string) => {
    if (failing?.call !== call) return false;
    errno = failing.errno;
    return true;
  };
  const libc: UdpBindLibc = {
    socket: (domain, type) => {
      calls.push(`socket ${domain} ${type}`);
      return fail("socket") ? -1 : 7;
    },
    setIntOption: (fd, level, name, value) => {
      calls.push(`setsockopt ${fd} ${level} ${name} ${value}`);
      return fail("setsockopt") ? -1 : 0;
    },
    bind: (fd, sockaddr, length) => {
      calls.push(`bind ${fd} family ${sockaddr[0]! | (sockaddr[1]! << 8)} port ${(sockaddr[2]! << 8) | sockaddr[3]!} length ${length}`);
      return fail("bind") ? -1 : 0;
    },
    getsockname: (fd, out) => {
      calls.push(`getsockname ${fd}`);
      if (fail("getsockname")) return -1;
      out[2] = chosenPort >> 8;
      out[3] = chosenPort & 0xff;
      return 0;
    },
    close: (fd) => {
      calls.push(`close ${fd}`);
      return 0;
    },
    errno: () => errno,
    strerror: (e) => `error ${e}`,
  };
  return { libc, calls };
}

describe("bindUdp (a UDP socket bound with libc, for Deno's data path)", () => {
  test("binds a non-blocking, close-on-exec IPv4 socket to the port asked", () => {
    const { libc, calls } = fakeLibc();
    const r = bindUdp(libc, "203.0.113.1", 443);
    expect(r.ok && r.value).toEqual({ fd: 7, port: 443 });
    expect(calls).toEqual([`socket ${AF_INET} ${SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC}`, `bind 7 family ${AF_INET} port 443 length 16`]);
  });

  test('"::" is dual-stack (IPV6_V6ONLY off); port 0 reads the port the kernel chose', () => {
    const { libc, calls } = fakeLibc(undefined, 51234);
    const r = bindUdp(libc, "::", 0);
    expect(r.ok && r.value).toEqual({ fd: 7, port: 51234 });
    expect(calls).toEqual([
      `socket ${AF_INET6} ${SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC}`,
      `setsockopt 7 ${IPPROTO_IPV6} ${IPV6_V6ONLY} 0`,
      `bind 7 family ${AF_INET6} port 0 length 28`,
      "getsockname 7",
    ]);
  });

  test("each failure has OpenUdp's code and a message that says what to do; the socket is closed", () => {
    const cases: [Parameters<typeof fakeLibc>[0], string, RegExp][] = [
      [{ call: "bind", errno: EADDRINUSE }, "udp_port_in_use", /UDP 203\.0\.113\.1:443 is already in use .*--no-dtls/],
      [{ call: "bind", errno: EACCES }, "udp_forbidden", /run as root or grant CAP_NET_BIND_SERVICE/],
      [{ call: "bind", errno: EADDRNOTAVAIL }, "udp_failed", /not an address of this machine .*fix the listen address/],
      [{ call: "bind", errno: 22 }, "udp_failed", /cannot bind UDP 203\.0\.113\.1:443 \(bind\(\): error 22\)/],
    ];
    for (const [failing, code, message] of cases) {
      const { libc, calls } = fakeLibc(failing);
      const r = bindUdp(libc, "203.0.113.1", 443);
      if (r.ok) throw new Error("bound");
      expect(r.error.code).toBe(code);
      expect(r.error.message).toMatch(message);
      expect(calls.at(-1)).toBe("close 7");
    }
    const { libc } = fakeLibc({ call: "getsockname", errno: 9 });
    const chosen = bindUdp(libc, "::", 0);
    expect(chosen.ok ? "bound" : chosen.error.code).toBe("udp_failed");
  });

  test("a name, a zone index or a bad port is refused before any socket is made", () => {
    for (const [host, port] of [["gw.example", 443], ["fe80::1%eth0", 443], ["127.0.0.1", 70000], ["127.0.0.1", -1]] as const) {
      const { libc, calls } = fakeLibc();
      const r = bindUdp(libc, host, port);
      expect(r.ok ? "bound" : r.error.code).toBe("udp_failed");
      expect(calls).toEqual([]);
    }
  });

  test("no socket at all (out of descriptors) is udp_failed", () => {
    const { libc } = fakeLibc({ call: "socket", errno: 24 });
    const r = bindUdp(libc, "127.0.0.1", 443);
    expect(r.ok ? "bound" : r.error.message).toMatch(/cannot open a UDP socket for UDP 127\.0\.0\.1:443: error 24/);
  });
});
