import { runtime } from "../runtime/current.ts";
import { echoRole } from "./echo-worker.ts";
import { tunnelRole } from "./tunnel-worker.ts";
import type { WorkerRoles } from "./worker-role.ts";

/** Every role gw's worker processes can take: gw serve's tunnel workers, and echo for the plumbing's tests. */
export const gwWorkerRoles: WorkerRoles = {
  echo: echoRole,
  tunnel: tunnelRole({ memory: runtime.memory, adoptTun: runtime.adoptTun, adoptUdp: runtime.adoptUdp, createGcmKey: runtime.createGcmKey, openRawTcp: runtime.openRawTcp }),
};
