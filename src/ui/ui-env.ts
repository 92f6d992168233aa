import type { ControlPlane } from "../control/control-plane.ts";
import type { ClientInfo } from "../runtime/https-server.ts";
import type { UiSession, UiSessions } from "./ui-sessions.ts";

/** What every UI handler sees: the peer (from the HTTPS server), the control plane, the signed-in session. */
export type UiEnv = {
  Bindings: Partial<ClientInfo>;
  Variables: { control: ControlPlane; sessions: UiSessions; session: UiSession };
};

export const SESSION_COOKIE = "gw_ui";
