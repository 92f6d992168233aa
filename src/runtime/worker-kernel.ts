import type { Result } from "../errors.ts";
import type { Ipv6Words } from "../net/ipv6.ts";
import type { TunOptions } from "./tun.ts";

/**
 * The kernel objects gw's worker processes share (docs/architecture.md §7): the steered TCP and
 * UDP groups on the tunnel port and the multi-queue TUN device with its steering program. The main
 * process creates them once and keeps every descriptor for its whole life; worker i gets copies of
 * tcp[i], udp?.[i] and tun.fds[i] at spawn, so a worker's death never reorders a group or a queue.
 */
export interface WorkerKernelOptions {
  /** How many workers (N >= 1): members per group and queues on the device. */
  workers: number;
  /** The tunnel port's listen address ("0.0.0.0", "::", "127.0.0.1", ...). */
  host: string;
  /** 443 usually; 0 = the kernel picks (tests). */
  tcpPort: number;
  /** Absent: no DTLS, no UDP group. 0 = the kernel picks. */
  udpPort?: number;
  /** As openTun takes it (name, address, prefixLength, mtu, ipv6?, offload?, log?). */
  tun: TunOptions;
  /** The IPv4 pool the steering map covers (createTunSteering's pool4). */
  pool4: { network: number; size: number };
  /** The IPv6 pool's first three words and how many placements it holds at most. */
  pool6?: { base: readonly [number, number, number]; maxPlacements: number };
}

/** What the main process holds for its whole life and hands out: worker i gets tcp[i], udp?.[i], tun.fds[i]. */
export interface WorkerKernel {
  /** The bound port (the chosen one when tcpPort was 0). */
  readonly tcpPort: number;
  readonly udpPort: number | undefined;
  readonly tcp: readonly number[];
  readonly udp: readonly number[] | undefined;
  readonly tun: { readonly name: string; readonly mtu: number; readonly vnetHeader: boolean; readonly fds: readonly number[] };
  /** Downstream packets to this pool address go to worker `worker`'s queue. Error codes: steering_outside_pool, steering_bad_queue, steering_closed, steering_update_failed. */
  place(address: number | Ipv6Words, worker: number): Result<void>;
  /** Back to queue 0 (no worker holds it). */
  remove(address: number | Ipv6Words): Result<void>;
  /**
   * Sets O_NONBLOCK again on every descriptor, after spawning a worker: Deno's node:child_process
   * clears it on the descriptors it hands to a child, for this process's copy too (the flag belongs
   * to the open socket or queue, which both share). One fcntl per descriptor that lost it, two
   * otherwise; idempotent. Error code: fd_flags_failed (after trying every descriptor).
   */
  restoreNonBlocking(): Result<void>;
  /** Closes everything (at gw's stop; the TUN device goes away with its last queue). Idempotent. */
  close(): void;
}

/**
 * Error codes: worker_kernel_invalid (bad options), those of the steered groups (port_in_use,
 * port_forbidden, listen_address_invalid, listen_address_unavailable, steering_failed), of the
 * TUN device (tun_unavailable, tun_permission, tun_busy, tun_config_failed) and of its steering
 * (steering_unavailable). On failure everything opened so far is closed again.
 */
export type OpenWorkerKernel = (options: WorkerKernelOptions) => Promise<Result<WorkerKernel>>;
