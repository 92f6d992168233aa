import { err, type GwError, ok, type Result } from "../../errors.ts";
import type { TunOptions } from "../tun.ts";
import type { WorkerKernel, WorkerKernelOptions } from "../worker-kernel.ts";
import type { BpfLibc } from "./bpf-libc.ts";
import { ensureNonBlocking } from "./fd-flags.ts";
import type { ReuseportLibc } from "./reuseport-libc.ts";
import { openSteeredGroup, type SteeredGroup, type SteeredGroupOptions } from "./steered-group.ts";
import type { TunLibc } from "./tun-libc.ts";
import { MAX_TUN_QUEUES, openTunQueues, type TunQueues } from "./tun-queues.ts";
import { createTunSteering, type TunSteering, type TunSteeringOptions } from "./tun-steering.ts";

/**
 * The steps a WorkerKernel is made of, as functions so that the order and the clean-up can be
 * tested without a kernel (linuxWorkerKernelParts binds them to the runtime's libc).
 */
export interface WorkerKernelParts {
  openGroup(options: SteeredGroupOptions): Result<SteeredGroup>;
  openQueues(options: TunOptions, count: number): Result<TunQueues>;
  createSteering(options: TunSteeringOptions): Result<TunSteering>;
  /** O_NONBLOCK on: `changed` when it was off, or the failed fcntl's errno. */
  ensureNonBlocking(fd: number): { changed: boolean } | { errno: number };
  close(fd: number): void;
  strerror(errno: number): string;
}

/** The libc bindings of one runtime; bpf is undefined where the bpf syscall's number is not known. */
export interface WorkerKernelLibcs {
  reuseport: ReuseportLibc;
  tun: TunLibc;
  bpf: BpfLibc | undefined;
}

export function linuxWorkerKernelParts(libcs: WorkerKernelLibcs): WorkerKernelParts {
  return {
    openGroup: (options) => openSteeredGroup(libcs.reuseport, options),
    openQueues: (options, count) => openTunQueues(libcs.tun, options, count),
    createSteering: (options) =>
      libcs.bpf
        ? createTunSteering(libcs.bpf, options)
        : err("steering_unavailable", `the TUN steering needs the bpf system call, whose number gw does not know on ${process.arch}: run one process (no --workers)`),
    ensureNonBlocking: (fd) => ensureNonBlocking(libcs.tun, fd),
    close: (fd) => void libcs.tun.close(fd),
    strerror: (errno) => libcs.tun.strerror(errno),
  };
}

/**
 * Opens, in this order, the TCP group, the UDP group, the TUN queues and the steering, and
 * attaches the steering to the device (the order each piece's module explains: a member's or a
 * queue's index is the order it joined). On a failure closes what it opened, newest first, and
 * returns that step's error.
 */
export function openWorkerKernelWith(parts: WorkerKernelParts, options: WorkerKernelOptions): Result<WorkerKernel> {
  const { workers } = options;
  if (!Number.isInteger(workers) || workers < 1 || workers > MAX_TUN_QUEUES) {
    return err("worker_kernel_invalid", `${workers} workers: gw runs 1 to ${MAX_TUN_QUEUES} worker processes (a TUN device has at most ${MAX_TUN_QUEUES} queues); fix --workers`);
  }
  const opened: number[] = [];
  let steering: TunSteering | undefined;
  const fail = (failed: { ok: false; error: GwError }): Result<WorkerKernel> => {
    steering?.close();
    for (const fd of opened.reverse()) parts.close(fd);
    return failed;
  };

  const tcp = parts.openGroup({ host: options.host, port: options.tcpPort, members: workers, kind: "tcp" });
  if (!tcp.ok) return tcp;
  opened.push(...tcp.value.fds);
  let udp: SteeredGroup | undefined;
  if (options.udpPort !== undefined) {
    const opening = parts.openGroup({ host: options.host, port: options.udpPort, members: workers, kind: "udp" });
    if (!opening.ok) return fail(opening);
    udp = opening.value;
    opened.push(...udp.fds);
  }
  const queues = parts.openQueues(options.tun, workers);
  if (!queues.ok) return fail(queues);
  opened.push(...queues.value.fds);
  const steered = parts.createSteering({ pool4: options.pool4, pool6: options.pool6 });
  if (!steered.ok) return fail(steered);
  steering = steered.value;
  const attached = steering.attach(queues.value.fds[0]!);
  if (!attached.ok) return fail(attached);

  const all = [...opened];
  const active = steering;
  let open = true;
  return ok({
    tcpPort: tcp.value.port,
    udpPort: udp?.port,
    tcp: tcp.value.fds,
    udp: udp?.fds,
    tun: { name: queues.value.name, mtu: options.tun.mtu, vnetHeader: queues.value.vnetHeader, fds: queues.value.fds },
    place(address, worker) {
      if (!Number.isInteger(worker) || worker < 0 || worker >= workers) {
        return err("steering_bad_queue", `worker ${worker} does not exist: there are ${workers} (0 to ${workers - 1})`);
      }
      return active.place(address, worker);
    },
    remove: (address) => active.remove(address),
    restoreNonBlocking() {
      if (!open) return ok(undefined);
      const failed: string[] = [];
      for (const fd of all) {
        const set = parts.ensureNonBlocking(fd);
        if ("errno" in set) failed.push(`fd ${fd}: ${parts.strerror(set.errno)} (errno ${set.errno})`);
      }
      if (failed.length === 0) return ok(undefined);
      return err("fd_flags_failed", `cannot make the workers' shared descriptors non-blocking again (${failed.join("; ")}): a worker reading a blocking descriptor stalls its event loop; restart gw`);
    },
    close() {
      if (!open) return;
      open = false;
      active.close();
      for (const fd of all) parts.close(fd);
    },
  });
}
