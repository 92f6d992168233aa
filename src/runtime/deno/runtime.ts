import type { Runtime } from "../runtime.ts";
import { createPortablePasswordHasher } from "../portable-password-hasher.ts";
import { denoFileLocks } from "./file-lock.ts";
import { createGcmKey } from "./gcm-libcrypto.ts";
import { createDenoMemoryProbe } from "./memory-probe.ts";
import { serveHttps } from "./https-server.ts";
import { raiseOpenFileLimit } from "./open-file-limit.ts";
import { adoptTun, openTun } from "./tun-device.ts";
import { adoptUdp } from "./udp-adopt.ts";
import { openUdp } from "./udp-socket.ts";
import { openWorkerKernel } from "./worker-kernel.ts";
import { denoWorkerProcesses } from "./worker-processes.ts";

/**
 * Deno's adapters. Not offered here: PSK-NEGOTIATE DTLS (node:tls under Deno has no
 * exportKeyingMaterial; the gateway logs that once and offers legacy DTLS, see psk-exporter.ts).
 */
export const denoRuntime: Runtime = {
  name: `deno ${Deno.version.deno}`,
  openTun,
  openUdp,
  openWorkerKernel,
  adoptTun,
  adoptUdp,
  serveHttps,
  passwordHasher: createPortablePasswordHasher(),
  createGcmKey,
  raiseOpenFileLimit,
  fileLocks: denoFileLocks,
  memory: createDenoMemoryProbe(),
  workerProcesses: denoWorkerProcesses,
};
