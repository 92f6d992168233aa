import type { DrainState, ReloadReport } from "../control/lifecycle.ts";
import { GwError } from "../errors.ts";
import { UsageError } from "./args.ts";
import { apiChange } from "./api-commands.ts";
import { command } from "./command.ts";

export const reloadCommand = apiChange({
  name: "reload",
  description: "Re-read certificate, key, client CA, CRL and settings without dropping sessions (as SIGHUP does)",
  options: {},
  request: () => ({ method: "POST", path: "/api/v1/reload" }),
  done: (_, r: ReloadReport) =>
    [
      `reloaded: certificate ${r.certificate.pin}${r.certificate.changed ? " (new)" : " (unchanged)"}, client CA ${r.clientCa}`,
      r.applied.length ? `applied now: ${r.applied.join(", ")}` : "",
      r.restartRequired.length ? `restart required for: ${r.restartRequired.join(", ")}` : "",
    ]
      .filter(Boolean)
      .join("\n"),
});

const POLL_MS = 1000;

/**
 * `gw drain`: refuse new logins, then wait while the sessions end; the server stops by itself
 * after the last one (or at the deadline), and so does this command.
 */
export const drainCommand = command({
  name: "drain",
  description: "Stop taking logins and stop the server once the last session has ended (or at --timeout, ending the rest)",
  reach: "api",
  options: { timeout: { type: "string", description: "Seconds to wait for the sessions to end (default 600)" } },
  json: "JSON output: the drain's state when it started",
  async run({ options, gw, json }) {
    const timeoutSeconds = options.timeout === undefined ? 600 : Number(options.timeout);
    if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1) throw new UsageError("--timeout must be a whole number of seconds, 1 or more");
    const started = await gw.call<DrainState>("POST", "/api/v1/drain", { timeoutSeconds });
    if (json) return { data: started };
    console.error(`draining: new logins are refused; ${started.sessions} session(s) left; the server stops by ${new Date(started.deadline).toISOString()}`);
    let last = started.sessions;
    for (;;) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      let state: DrainState;
      try {
        state = await gw.call<DrainState>("GET", "/api/v1/drain");
      } catch (e) {
        // The server has stopped: its API no longer answers.
        if (e instanceof GwError && (e.code === "api_unreachable" || e.code === "server_unreachable")) break;
        throw e;
      }
      if (state.sessions !== last) console.error(`${state.sessions} session(s) left`);
      last = state.sessions;
    }
    console.error("drained: the server has stopped");
  },
});
