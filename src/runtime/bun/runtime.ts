import type { Runtime } from "../runtime.ts";
import { bunFileLocks } from "./file-lock.ts";
import { bunMemoryProbe } from "./memory-probe.ts";
import { serveHttps } from "./https-server.ts";
import { raiseOpenFileLimit } from "./open-file-limit.ts";
import { createBunPasswordHasher } from "./password-hasher.ts";
import { adoptTun, openTun } from "./tun-device.ts";
import { adoptUdp } from "./udp-adopt.ts";
import { openUdp } from "./udp-socket.ts";
import { openWorkerKernel } from "./worker-kernel.ts";
import { bunWorkerProcesses } from "./worker-processes.ts";
import { createGcmKey } from "./gcm-libcrypto.ts";
import { openRawTcp } from "./raw-tcp.ts";

export const bunRuntime: Runtime = {
  name: `bun ${Bun.version}`,
  openTun,
  openUdp,
  openWorkerKernel,
  adoptTun,
  adoptUdp,
  serveHttps,
  passwordHasher: createBunPasswordHasher(),
  raiseOpenFileLimit,
  fileLocks: bunFileLocks,
  memory: bunMemoryProbe,
  workerProcesses: bunWorkerProcesses,
  createGcmKey,
  openRawTcp,
};
