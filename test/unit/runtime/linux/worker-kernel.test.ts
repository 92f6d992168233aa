import { describe, expect, test } from "bun:test";
import { err, ok } from "../../../../src/errors.ts";
import { openWorkerKernelWith, type WorkerKernelParts } from "../../../../src/runtime/linux/worker-kernel.ts";
import type { TunSteering } from "../../../../src/runtime/linux/tun-steering.ts";
import type { WorkerKernelOptions } from "../../../../src/runtime/worker-kernel.ts";

type Step = "tcp" | "udp" | "queues" | "steering" | "attach";

/** Parts that hand out fds 10, 11, ... and record every step, failing the step named in `failOn`. */
function fakeParts(failOn?: Step, nonBlockingErrno: Record<number, number> = {}) {
  const calls: string[] = [];
  const closed: number[] = [];
  const open = new Set<number>();
  let next = 10;
  const fds = (n: number) => Array.from({ length: n }, () => {
    const fd = next++;
    open.add(fd);
    return fd;
  });
  let steeringClosed = 0;
  const placed: string[] = [];
  const steering: TunSteering = {
    attach: (fd) => {
      calls.push(`attach ${fd}`);
      return failOn === "attach" ? err("steering_unavailable", "attach refused") : ok(undefined);
    },
    place: (address, queue) => {
      placed.push(`${address} -> ${queue}`);
      return ok(undefined);
    },
    remove: (address) => {
      placed.push(`${address} -> removed`);
      return ok(undefined);
    },
    close: () => void steeringClosed++,
  };
  const parts: WorkerKernelParts = {
    openGroup: (o) => {
      calls.push(`${o.kind} ${o.host}:${o.port} x${o.members}`);
      if (failOn === o.kind) return err("port_in_use", `${o.kind} port held`);
      return ok({ fds: fds(o.members), port: o.port === 0 ? 40000 + calls.length : o.port });
    },
    openQueues: (o, count) => {
      calls.push(`queues ${o.name} x${count}`);
      return failOn === "queues" ? err("tun_busy", "device busy") : ok({ name: o.name, vnetHeader: true, fds: fds(count) });
    },
    createSteering: (o) => {
      calls.push(`steering ${o.pool4.size}${o.pool6 ? " +6" : ""}`);
      return failOn === "steering" ? err("steering_unavailable", "no bpf") : ok(steering);
    },
    ensureNonBlocking: (fd) => {
      calls.push(`nonblock ${fd}`);
      return fd in nonBlockingErrno ? { errno: nonBlockingErrno[fd]! } : { changed: fd % 2 === 0 };
    },
    close: (fd) => {
      closed.push(fd);
      open.delete(fd);
    },
    strerror: (e) => `strerror ${e}`,
  };
  return { parts, calls, closed, open, placed, steeringClosed: () => steeringClosed };
}

const options = (o: Partial<WorkerKernelOptions> = {}): WorkerKernelOptions => ({
  workers: 3,
  host: "0.0.0.0",
  tcpPort: 443,
  udpPort: 443,
  tun: { name: "gw0", address: "10.10.0.1", prefixLength: 24, mtu: 1400 },
  pool4: { network: 0x0a0a0000, size: 256 },
  ...o,
});

describe("openWorkerKernelWith", () => {
  test("opens TCP, UDP, the queues and the steering in that order, attaches to queue 0, hands out member i at index i", () => {
    const fake = fakeParts();
    const kernel = openWorkerKernelWith(fake.parts, options());
    if (!kernel.ok) throw kernel.error;
    expect(fake.calls).toEqual(["tcp 0.0.0.0:443 x3", "udp 0.0.0.0:443 x3", "queues gw0 x3", "steering 256", "attach 16"]);
    expect(kernel.value.tcp).toEqual([10, 11, 12]);
    expect(kernel.value.udp).toEqual([13, 14, 15]);
    expect(kernel.value.tun).toEqual({ name: "gw0", mtu: 1400, vnetHeader: true, fds: [16, 17, 18] });
    expect([kernel.value.tcpPort, kernel.value.udpPort]).toEqual([443, 443]);
    expect(fake.closed).toEqual([]);
  });

  test("no udpPort: no UDP group; ports chosen by the kernel are reported", () => {
    const fake = fakeParts();
    const kernel = openWorkerKernelWith(fake.parts, options({ tcpPort: 0, udpPort: undefined, workers: 1 }));
    if (!kernel.ok) throw kernel.error;
    expect(fake.calls.filter((c) => c.startsWith("udp"))).toEqual([]);
    expect(kernel.value.udp).toBeUndefined();
    expect(kernel.value.udpPort).toBeUndefined();
    expect(kernel.value.tcpPort).toBe(40001);
  });

  for (const [step, code, closedCount] of [
    ["tcp", "port_in_use", 0],
    ["udp", "port_in_use", 3],
    ["queues", "tun_busy", 6],
    ["steering", "steering_unavailable", 9],
    ["attach", "steering_unavailable", 9],
  ] as const) {
    test(`a failure at ${step} returns its error (${code}) and closes everything opened before, newest first`, () => {
      const fake = fakeParts(step);
      const kernel = openWorkerKernelWith(fake.parts, options());
      expect(kernel.ok).toBe(false);
      if (!kernel.ok) expect(kernel.error.code).toBe(code);
      expect(fake.open.size).toBe(0);
      expect(fake.closed).toHaveLength(closedCount);
      expect(fake.closed).toEqual([...fake.closed].sort((a, b) => b - a));
      expect(fake.steeringClosed()).toBe(step === "attach" ? 1 : 0);
    });
  }

  test("refuses a worker count the device cannot have, before opening anything", () => {
    for (const workers of [0, -1, 1.5, 257]) {
      const fake = fakeParts();
      const kernel = openWorkerKernelWith(fake.parts, options({ workers }));
      expect(kernel.ok ? "opened" : kernel.error.code).toBe("worker_kernel_invalid");
      expect(fake.calls).toEqual([]);
    }
  });

  test("place() takes a worker index below the count and passes it to the steering as the queue", () => {
    const fake = fakeParts();
    const kernel = openWorkerKernelWith(fake.parts, options());
    if (!kernel.ok) throw kernel.error;
    expect(kernel.value.place(0x0a0a0005, 2).ok).toBe(true);
    for (const worker of [3, -1, 0.5]) {
      const placed = kernel.value.place(0x0a0a0005, worker);
      expect(placed.ok ? "placed" : placed.error.code).toBe("steering_bad_queue");
    }
    expect(kernel.value.remove(0x0a0a0005).ok).toBe(true);
    expect(fake.placed).toEqual([`${0x0a0a0005} -> 2`, `${0x0a0a0005} -> removed`]);
  });

  test("restoreNonBlocking visits every descriptor and names each that failed", () => {
    const fake = fakeParts(undefined, { 12: 9, 17: 9 });
    const kernel = openWorkerKernelWith(fake.parts, options());
    if (!kernel.ok) throw kernel.error;
    const restored = kernel.value.restoreNonBlocking();
    expect(fake.calls.filter((c) => c.startsWith("nonblock")).map((c) => Number(c.split(" ")[1]))).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18]);
    expect(restored.ok).toBe(false);
    if (!restored.ok) {
      expect(restored.error.code).toBe("fd_flags_failed");
      expect(restored.error.message).toContain("fd 12: strerror 9");
      expect(restored.error.message).toContain("fd 17: strerror 9");
    }
    const clean = fakeParts();
    const other = openWorkerKernelWith(clean.parts, options());
    if (!other.ok) throw other.error;
    expect(other.value.restoreNonBlocking().ok).toBe(true);
  });

  test("close() closes the steering and every descriptor once, however often it is called", () => {
    const fake = fakeParts();
    const kernel = openWorkerKernelWith(fake.parts, options());
    if (!kernel.ok) throw kernel.error;
    kernel.value.close();
    kernel.value.close();
    expect(fake.closed.sort((a, b) => a - b)).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18]);
    expect(fake.steeringClosed()).toBe(1);
    const calls = fake.calls.length;
    expect(kernel.value.restoreNonBlocking().ok).toBe(true);
    expect(fake.calls.length).toBe(calls); // nothing touched after close: the numbers may be someone else's now
  });
});
