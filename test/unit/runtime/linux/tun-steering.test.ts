import { describe, expect, test } from "bun:test";
import { parseIpv4 } from "../../../../src/net/ipv4.ts";
import { parseIpv6 } from "../../../../src/net/ipv6.ts";
import type { BpfLibc } from "../../../../src/runtime/linux/bpf-libc.ts";
import { createTunSteering } from "../../../../src/runtime/linux/tun-steering.ts";

/** A BpfLibc that records each bpf(2) call (attr and pointed-to buffers copied) and answers from a script. */
function fakeLibc(answer: (command: number, attr: DataView) => number = () => 7) {
  const calls: { command: number; attr: DataView; pointers: Map<number, Uint8Array> }[] = [];
  const ioctls: { fd: number; request: number; arg: Uint8Array }[] = [];
  const closed: number[] = [];
  let nextFd = 10;
  let errno = 0;
  const libc: BpfLibc = {
    bpf(command, attr, pointers) {
      const view = new DataView(attr.slice().buffer);
      calls.push({ command, attr: view, pointers: new Map(pointers.map((p) => [p.offset, p.buffer.slice()])) });
      const r = answer(command, view);
      if (r < 0) errno = -r;
      const log = pointers.find((p) => p.offset === 32)?.buffer; // a load's log, as the verifier fills it
      if (r < 0 && log) new TextEncoder().encodeInto("0: (bf) r0 = r2\nR2 !read_ok\n", log);
      return r < 0 ? -1 : command === 0 || command === 5 ? nextFd++ : 0;
    },
    ioctl: (fd, request, arg) => (ioctls.push({ fd, request, arg: arg.slice() }), 0),
    close: (fd) => (closed.push(fd), 0),
    errno: () => errno,
    strerror: (e) => `strerror ${e}`,
  };
  return { libc, calls, ioctls, closed };
}

const u32 = (bytes: Uint8Array | undefined) => new DataView(bytes!.buffer).getUint32(0, true);
const pool4 = { network: parseIpv4("10.98.0.0")!, size: 128 };
const pool6 = { base: [0x20010db8, 0x00980000, 0] as const, maxPlacements: 1024 };

describe("TunSteering setup", () => {
  test("creates an ARRAY map for IPv4, a HASH map for IPv6, then loads a socket filter", () => {
    const { libc, calls } = fakeLibc();
    expect(createTunSteering(libc, { pool4, pool6 }).ok).toBe(true);
    expect(calls.map((c) => c.command)).toEqual([0, 0, 5]); // BPF_MAP_CREATE x2, BPF_PROG_LOAD
    const [map4, map6, load] = calls;
    expect([0, 4, 8, 12].map((o) => map4!.attr.getUint32(o, true))).toEqual([2, 4, 4, 128]); // type, key, value, entries
    expect([0, 4, 8, 12].map((o) => map6!.attr.getUint32(o, true))).toEqual([1, 4, 4, 1024]);
    expect(load!.attr.getUint32(0, true)).toBe(1); // BPF_PROG_TYPE_SOCKET_FILTER
    const insns = load!.pointers.get(8)!;
    expect(load!.attr.getUint32(4, true)).toBe(insns.byteLength / 8);
    expect(new TextDecoder().decode(load!.pointers.get(16))).toBe("MIT\0");
    expect(load!.attr.getUint32(24, true)).toBe(1); // log level
    expect(load!.attr.getUint32(28, true)).toBe(load!.pointers.get(32)!.byteLength);
    // The program refers to both maps by the fds the kernel gave (10, 11) in its 64-bit loads.
    const mapLoads: number[] = [];
    for (let at = 0; at < insns.byteLength; at += 8) if (insns[at] === 0x18 && insns[at + 1] === 0x11) mapLoads.push(new DataView(insns.buffer).getInt32(at + 4, true));
    expect(mapLoads).toEqual([10, 11]);
  });

  test("a refused load is steering_unavailable with the verifier's log, and the maps are closed", () => {
    const { libc, closed } = fakeLibc((command) => (command === 5 ? -13 : 0));
    const r = createTunSteering(libc, { pool4, pool6 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe("steering_unavailable");
    expect(r.error.message).toContain("cannot load BPF program gw_tun_steer: strerror 13 (EACCES)");
    expect(r.error.message).toContain("the verifier said:\n0: (bf) r0 = r2\nR2 !read_ok");
    expect((r.error.details as { log: string }).log).toBe("0: (bf) r0 = r2\nR2 !read_ok");
    expect(closed).toEqual([10, 11]);
  });

  test("without the right to create maps: steering_unavailable saying which capabilities", () => {
    const { libc } = fakeLibc(() => -1);
    const r = createTunSteering(libc, { pool4 });
    expect(!r.ok && r.error.code).toBe("steering_unavailable");
    expect(!r.ok && r.error.message).toContain("CAP_BPF");
  });

  test("a pool larger than a /12 is refused before any syscall", () => {
    const { libc, calls } = fakeLibc();
    const r = createTunSteering(libc, { pool4: { network: 0x0a000000, size: 1 << 24 } });
    expect(!r.ok && r.error.code).toBe("steering_unavailable");
    expect(calls).toHaveLength(0);
  });
});

describe("TunSteering placements", () => {
  const setup = () => {
    const fake = fakeLibc();
    const r = createTunSteering(fake.libc, { pool4, pool6 });
    if (!r.ok) throw r.error;
    fake.calls.length = 0;
    return { ...fake, steering: r.value };
  };

  test("attach hands the program fd to TUNSETSTEERINGEBPF on the queue fd", () => {
    const { steering, ioctls } = setup();
    expect(steering.attach(42).ok).toBe(true);
    expect(ioctls).toHaveLength(1);
    expect(ioctls[0]!.fd).toBe(42);
    expect(ioctls[0]!.request).toBe(0x800454e0);
    expect(new DataView(ioctls[0]!.arg.buffer).getInt32(0, true)).toBe(12); // the program's fd
  });

  test("place writes key = offset in the pool, value = queue, into the IPv4 map", () => {
    const { steering, calls } = setup();
    expect(steering.place(parseIpv4("10.98.0.5")!, 3).ok).toBe(true);
    expect(calls[0]!.command).toBe(2); // BPF_MAP_UPDATE_ELEM
    expect(calls[0]!.attr.getUint32(0, true)).toBe(10);
    expect(u32(calls[0]!.pointers.get(8))).toBe(5);
    expect(u32(calls[0]!.pointers.get(16))).toBe(3);
  });

  test("remove of an IPv4 address writes queue 0 (an ARRAY map cannot delete)", () => {
    const { steering, calls } = setup();
    expect(steering.remove(parseIpv4("10.98.0.5")!).ok).toBe(true);
    expect(calls[0]!.command).toBe(2);
    expect(u32(calls[0]!.pointers.get(16))).toBe(0);
  });

  test("IPv6: the last word is the key in the IPv6 map; remove deletes, a missing entry is fine", () => {
    const fake = fakeLibc((command) => (command === 3 ? -2 : 0)); // delete: ENOENT
    const steering = createTunSteering(fake.libc, { pool4, pool6 });
    if (!steering.ok) throw steering.error;
    fake.calls.length = 0;
    expect(steering.value.place(parseIpv6("2001:db8:98::1:5")!, 1).ok).toBe(true);
    expect(fake.calls[0]!.attr.getUint32(0, true)).toBe(11);
    expect(u32(fake.calls[0]!.pointers.get(8))).toBe(0x10005);
    expect(steering.value.remove(parseIpv6("2001:db8:98::1:5")!).ok).toBe(true);
    expect(fake.calls[1]!.command).toBe(3); // BPF_MAP_DELETE_ELEM
  });

  test("a failed update is steering_update_failed", () => {
    const fake = fakeLibc((command) => (command === 2 ? -7 : 0)); // E2BIG
    const steering = createTunSteering(fake.libc, { pool4 });
    if (!steering.ok) throw steering.error;
    const r = steering.value.place(parseIpv4("10.98.0.5")!, 1);
    expect(!r.ok && r.error.code).toBe("steering_update_failed");
  });

  test("addresses outside the pools and bad queue numbers are refused without a syscall", () => {
    const { steering, calls } = setup();
    const outside = steering.place(parseIpv4("10.98.0.128")!, 1);
    expect(!outside.ok && outside.error.code).toBe("steering_outside_pool");
    expect(!outside.ok && outside.error.message).toContain("10.98.0.128");
    expect(!steering.place(parseIpv6("2001:db8:99::5")!, 1).ok).toBe(true);
    const queue = steering.place(parseIpv4("10.98.0.5")!, 256);
    expect(!queue.ok && queue.error.code).toBe("steering_bad_queue");
    expect(!steering.place(parseIpv4("10.98.0.5")!, 1.5).ok).toBe(true);
    expect(calls).toHaveLength(0);
  });

  test("without an IPv6 pool an IPv6 address is outside", () => {
    const fake = fakeLibc();
    const steering = createTunSteering(fake.libc, { pool4 });
    if (!steering.ok) throw steering.error;
    const r = steering.value.place(parseIpv6("2001:db8:98::5")!, 1);
    expect(!r.ok && r.error.code).toBe("steering_outside_pool");
  });

  test("close closes the maps and the program once; afterwards every call is steering_closed", () => {
    const { steering, closed } = setup();
    steering.close();
    steering.close();
    expect(closed).toEqual([10, 11, 12]);
    const r = steering.place(parseIpv4("10.98.0.5")!, 1);
    expect(!r.ok && r.error.code).toBe("steering_closed");
    expect(!steering.attach(3).ok).toBe(true);
  });
});
