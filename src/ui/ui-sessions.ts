import { randomBytes, timingSafeEqual } from "node:crypto";
import type { AdminRole } from "../control/admins.ts";

/** Who is signed in: an admin account, or an API token pasted into the sign-in form. */
export interface UiPrincipal {
  kind: "admin" | "token";
  name: string;
  role: AdminRole;
}

export interface UiSession {
  id: string;
  principal: UiPrincipal;
  /** Sent back with every change (hidden field or X-CSRF-Token header). */
  csrf: string;
  /** For token sign-ins: the secret, checked again on every request (a revoked token ends the session). */
  tokenSecret?: string;
  createdAt: number;
  lastSeenAt: number;
  /** A message for the next page (after a change redirects): kept server-side, so a link cannot forge one. */
  flash?: string;
}

export interface UiSessionLimits {
  /** Ends after this long without a request. */
  idleMs: number;
  /** Ends this long after sign-in, however busy. */
  absoluteMs: number;
  /** Oldest sessions go first beyond this many (memory stays bounded). */
  max: number;
}

export const DEFAULT_SESSION_LIMITS: UiSessionLimits = { idleMs: 30 * 60_000, absoluteMs: 12 * 3_600_000, max: 1000 };

/**
 * Browser sessions of the web UI, in the server's memory (they end with it, like bans): an
 * unguessable id in the cookie, idle and absolute expiry, and one CSRF token per session.
 */
export class UiSessions {
  private readonly sessions = new Map<string, UiSession>();

  constructor(
    private readonly now: () => number,
    private readonly limits: UiSessionLimits = DEFAULT_SESSION_LIMITS,
  ) {}

  open(principal: UiPrincipal, tokenSecret?: string): UiSession {
    const now = this.now();
    const session: UiSession = { id: randomToken(), principal, csrf: randomToken(), createdAt: now, lastSeenAt: now, ...(tokenSecret ? { tokenSecret } : {}) };
    if (this.sessions.size >= this.limits.max) this.sessions.delete(this.sessions.keys().next().value!);
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session for a cookie value, touched (idle timer restarts); expired ones are removed. */
  touch(id: string | undefined): UiSession | undefined {
    if (!id) return undefined;
    const session = this.sessions.get(id);
    if (!session) return undefined;
    const now = this.now();
    if (now - session.lastSeenAt > this.limits.idleMs || now - session.createdAt > this.limits.absoluteMs) {
      this.sessions.delete(id);
      return undefined;
    }
    session.lastSeenAt = now;
    return session;
  }

  /** Whether a session is still live, without counting as activity (a live stream must not keep it open forever). */
  alive(id: string): boolean {
    const session = this.sessions.get(id);
    if (!session) return false;
    const now = this.now();
    return now - session.lastSeenAt <= this.limits.idleMs && now - session.createdAt <= this.limits.absoluteMs;
  }

  close(id: string): void {
    this.sessions.delete(id);
  }

  get size(): number {
    return this.sessions.size;
  }
}

export function csrfMatches(session: UiSession, sent: string | undefined): boolean {
  if (!sent) return false;
  const a = Buffer.from(session.csrf);
  const b = Buffer.from(sent);
  return a.length === b.length && timingSafeEqual(a, b);
}

const randomToken = () => randomBytes(32).toString("base64url");
