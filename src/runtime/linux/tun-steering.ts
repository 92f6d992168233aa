import { err, type GwError, ok, type Result } from "../../errors.ts";
import { formatIpv4 } from "../../net/ipv4.ts";
import type { Ipv6Words } from "../../net/ipv6.ts";
import { BPF_MAP_TYPE_ARRAY, BPF_MAP_TYPE_HASH, BPF_PROG_TYPE_SOCKET_FILTER, bpfError, createMap, deleteElement, loadProgram, updateElement } from "./bpf.ts";
import type { BpfLibc } from "./bpf-libc.ts";
import { ipv4SteeringKey, ipv6SteeringKey, u32Bytes } from "./tun-steering-keys.ts";
import { steeringProgram } from "./tun-steering-program.ts";

/**
 * Which queue of a multi-queue TUN device reads the packets for each session address: an eBPF
 * program (tun-steering-program.ts) the device runs for every packet it is handed, and the maps
 * it reads, which place() and remove() change while packets flow. Addresses without a place go
 * to queue 0. The device keeps the program (and so the maps) after close(); only the ability
 * to change them goes.
 *
 * A queue's index is its position among the device's attached queues (the order of TUNSETIFF);
 * the kernel moves the last queue into a closed queue's place, so the indices hold as long as
 * one process keeps every queue's fd open.
 */
export interface TunSteering {
  /** Makes the device behind this queue fd (any of its queues) steer with this program. */
  attach(queueFd: number): Result<void>;
  /** Packets to `address` go to queue `queue` (the kernel takes it modulo the number of queues). */
  place(address: number | Ipv6Words, queue: number): Result<void>;
  /** Packets to `address` go to queue 0 again. */
  remove(address: number | Ipv6Words): Result<void>;
  /** Closes the map and program fds here; the device keeps steering with the last placements. */
  close(): void;
}

export interface TunSteeringOptions {
  /** The IPv4 pool: its network address as a number and how many addresses from it can be placed. */
  pool4: { network: number; size: number };
  /** The IPv6 pool's first three words (every lease shares them) and how many placements it holds at most. */
  pool6?: { base: readonly [number, number, number]; maxPlacements: number };
}

/** An ARRAY map of 2^20 u32 values is 8 MiB of kernel memory (values are padded to 8 bytes): a /12 pool. */
export const MAX_POOL4_ADDRESSES = 1 << 20;
const TUNSETSTEERINGEBPF = 0x800454e0; // _IOR('T', 224, int)
const MAX_QUEUES = 256; // MAX_TAP_QUEUES in tun.c

export function createTunSteering(libc: BpfLibc, o: TunSteeringOptions): Result<TunSteering> {
  const size4 = o.pool4.size;
  if (!Number.isInteger(size4) || size4 < 1 || size4 > MAX_POOL4_ADDRESSES) {
    return err("steering_unavailable", `cannot steer an IPv4 pool of ${size4} addresses: it must hold 1 to ${MAX_POOL4_ADDRESSES} (a /12); use a smaller pool`);
  }
  const base4 = o.pool4.network >>> 0;
  const fds: number[] = [];
  const fail = (error: GwError): Result<TunSteering> => {
    for (const fd of fds) libc.close(fd);
    return { ok: false, error };
  };
  const map4 = createMap(libc, { type: BPF_MAP_TYPE_ARRAY, keyBytes: 4, valueBytes: 4, maxEntries: size4, name: "gw_steer4" });
  if (!map4.ok) return fail(map4.error);
  const map4Fd = map4.value;
  fds.push(map4Fd);
  const pool6 = o.pool6;
  let map6Fd = -1;
  if (pool6) {
    const map6 = createMap(libc, { type: BPF_MAP_TYPE_HASH, keyBytes: 4, valueBytes: 4, maxEntries: pool6.maxPlacements, name: "gw_steer6" });
    if (!map6.ok) return fail(map6.error);
    map6Fd = map6.value;
    fds.push(map6Fd);
  }
  const insns = steeringProgram({ map4Fd, base4, size4, v6: pool6 ? { mapFd: map6Fd, base: pool6.base } : undefined });
  // Only the map lookup helper is called, which is not GPL-only, so any license string loads.
  const program = loadProgram(libc, { type: BPF_PROG_TYPE_SOCKET_FILTER, insns, license: "MIT", name: "gw_tun_steer" });
  if (!program.ok) return fail(program.error);
  const programFd = program.value;
  fds.push(programFd);

  const key = (address: number | Ipv6Words): Result<{ mapFd: number; key: Uint8Array; array: boolean }> => {
    if (typeof address === "number") {
      const k = ipv4SteeringKey(address, base4, size4);
      return k === undefined
        ? err("steering_outside_pool", `address ${formatIpv4(address)} is outside the steered IPv4 pool (${size4} addresses from ${formatIpv4(base4)})`)
        : ok({ mapFd: map4Fd, key: u32Bytes(k), array: true });
    }
    const k = pool6 ? ipv6SteeringKey(address, pool6.base) : undefined;
    return k === undefined
      ? err("steering_outside_pool", "the IPv6 address is not in the steered IPv6 pool (or no IPv6 pool was given)")
      : ok({ mapFd: map6Fd, key: u32Bytes(k), array: false });
  };

  let open = true;
  const closed = () => err("steering_closed", "the steering was closed; create a new one");
  return ok({
    attach(queueFd) {
      if (!open) return closed();
      const arg = new Uint8Array(Int32Array.of(programFd).buffer);
      return libc.ioctl(queueFd, TUNSETSTEERINGEBPF, arg) === 0
        ? ok(undefined)
        : bpfError(libc, "steering_unavailable", `attach the steering program to the TUN queue fd ${queueFd} (TUNSETSTEERINGEBPF)`);
    },
    place(address, queue) {
      if (!open) return closed();
      if (!Number.isInteger(queue) || queue < 0 || queue >= MAX_QUEUES) {
        return err("steering_bad_queue", `queue ${queue} must be an integer from 0 to ${MAX_QUEUES - 1}`);
      }
      const k = key(address);
      return k.ok ? updateElement(libc, k.value.mapFd, k.value.key, u32Bytes(queue)) : k;
    },
    remove(address) {
      if (!open) return closed();
      const k = key(address);
      if (!k.ok) return k;
      // An array map cannot delete (the kernel says EINVAL): its entry goes back to 0, queue 0.
      if (k.value.array) return updateElement(libc, k.value.mapFd, k.value.key, u32Bytes(0));
      const removed = deleteElement(libc, k.value.mapFd, k.value.key);
      const ENOENT = 2;
      return removed.ok || (removed.error.details as { errno?: number }).errno !== ENOENT ? removed : ok(undefined);
    },
    close() {
      if (!open) return;
      open = false;
      for (const fd of fds) libc.close(fd);
    },
  });
}
