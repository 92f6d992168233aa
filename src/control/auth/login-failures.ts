import type { EventBus } from "../events.ts";
import { logLine, type Log } from "../../log/log-line.ts";
import type { AuthStats } from "./auth-stats.ts";
import type { LoginClient, LoginContext } from "./auth-step.ts";
import type { LoginGuard } from "./login-guard.ts";

/** The login's answer when it is refused. */
export interface Refused {
  kind: "refused";
  message: string;
  /** The client is banned for that long (brute-force protection). */
  retryAfterSeconds?: number;
}

/** How one failure is recorded. */
export interface FailureNote {
  /** The failure's code, in stats, events and the log line (e.g. bad_password). */
  reason: string;
  /** false: not counted towards a ban (the failure is no guess: a ban itself, a full gateway, a client without SSO). */
  counts?: boolean;
  /** false: the caller says it once per interval instead (a refusal a crowd can trigger). */
  logged?: boolean;
}

export interface Refusal extends FailureNote {
  /** What the client is told. */
  message: string;
  retryAfterSeconds?: number;
  /** false: the login context stays usable (a ban, a factor without a step: a later request may continue it). */
  endsLogin?: boolean;
}

export interface LoginFailuresOptions {
  stats: AuthStats;
  guard?: LoginGuard;
  events?: EventBus;
  log: Log;
  /** Forgets the login context: the client's next request starts a new login. */
  endLogin(context: LoginContext): void;
}

/**
 * The one place a failed login is recorded: the stats by reason, the ban guard's count, the
 * auth.failure event and the log line. `refuse` does that and answers; a failure the client may
 * retry (a form again) is only `note`d.
 */
export class LoginFailures {
  constructor(private readonly o: LoginFailuresOptions) {}

  note(failure: FailureNote, client: LoginClient, context: LoginContext): void {
    const { reason, counts = true, logged = true } = failure;
    this.o.stats.failure(reason);
    if (counts) this.o.guard?.failure(client.ip, context.lastUserName ?? context.user?.name);
    this.o.events?.emit({ type: "auth.failure", user: context.lastUserName ?? null, reason, peer: client.peer });
    if (logged) this.o.log(logLine`login failed reason=${reason} user=${context.lastUserName ?? "-"} peer=${client.peer}`);
  }

  refuse(refusal: Refusal, client: LoginClient, context: LoginContext): Refused {
    this.note(refusal, client, context);
    if (refusal.endsLogin !== false) this.o.endLogin(context);
    return refusal.retryAfterSeconds === undefined
      ? { kind: "refused", message: refusal.message }
      : { kind: "refused", message: refusal.message, retryAfterSeconds: refusal.retryAfterSeconds };
  }
}
