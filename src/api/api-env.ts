import type { ControlPlane } from "../control/control-plane.ts";
import type { Principal } from "../control/tokens.ts";

/** What every handler can read from the context. */
export type ApiEnv = { Variables: { principal: Principal; control: ControlPlane } };
