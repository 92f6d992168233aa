import type { FileLocks } from "./file-lock.ts";
import type { MemoryProbe } from "./memory-probe.ts";
import type { ServeHttps } from "./https-server.ts";
import type { RaiseOpenFileLimit } from "./open-files.ts";
import type { PasswordHasher } from "./password-hasher.ts";
import type { AdoptTun, OpenTun } from "./tun.ts";
import type { AdoptUdp, OpenUdp } from "./udp.ts";
import type { CreateGcmKey } from "./gcm.ts";
import type { OpenRawTcp } from "./raw-tcp.ts";
import type { WorkerProcesses } from "./worker-process.ts";
import type { OpenWorkerKernel } from "./worker-kernel.ts";

/** Everything the gateway and the CLI take from the runtime they run on, one adapter set per runtime. */
export interface Runtime {
  /** "bun" or "deno", for logs and `gw --version`. */
  readonly name: string;
  readonly openTun: OpenTun;
  readonly openUdp: OpenUdp;
  /** In the main process: the sockets, TUN queues and steering shared by the worker processes. */
  readonly openWorkerKernel: OpenWorkerKernel;
  /** In a worker process: its handed TUN queue as a TunDevice. */
  readonly adoptTun: AdoptTun;
  /** In a worker process: its handed member of the UDP group. */
  readonly adoptUdp: AdoptUdp;
  readonly serveHttps: ServeHttps;
  readonly passwordHasher: PasswordHasher;
  readonly raiseOpenFileLimit: RaiseOpenFileLimit;
  readonly fileLocks: FileLocks;
  readonly memory: MemoryProbe;
  /** Starting gw's worker processes and, in a worker, its link to the main process. */
  readonly workerProcesses: WorkerProcesses;
  /** Native AES-GCM contexts for DTLS records; absent: node:crypto per record. */
  readonly createGcmKey?: CreateGcmKey;
  /** Direct writes to the TCP socket under a TLS socket (the gateway's own TLS 1.3 records); absent: the TLS library writes. */
  readonly openRawTcp?: OpenRawTcp;
}
