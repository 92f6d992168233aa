import { echoRole } from "./echo-worker.ts";
import type { WorkerRoles } from "./worker-role.ts";

/** Every role gw's worker processes can take (the packet path's comes with the next step). */
export const gwWorkerRoles: WorkerRoles = { echo: echoRole };
