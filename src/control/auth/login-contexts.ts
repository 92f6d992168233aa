import { randomBytes } from "node:crypto";
import type { LoginContext } from "./auth-step.ts";

export interface LoginContextsOptions {
  now(): number;
  /** How long a login may take from its first request. */
  ttlMs?: number;
  maxContexts?: number;
}

/**
 * Logins in progress, by the context id handed to the client (AnyConnect may use a new TLS
 * connection for each request). Bounded: expired contexts go first, then the oldest, so a
 * flood of inits cannot grow memory.
 */
export class LoginContexts {
  private readonly byId = new Map<string, LoginContext>();
  private readonly ttl: number;
  private readonly max: number;

  constructor(private readonly o: LoginContextsOptions) {
    this.ttl = o.ttlMs ?? 5 * 60_000;
    this.max = o.maxContexts ?? 10_000;
  }

  /** The live context of this id, or a new one. */
  open(id: string | undefined): LoginContext {
    const now = this.o.now();
    const existing = id ? this.byId.get(id) : undefined;
    if (existing && now - existing.createdAt <= this.ttl) return existing;
    if (existing) this.byId.delete(existing.id);
    this.evict(now);
    const context: LoginContext = { id: randomBytes(16).toString("base64url"), createdAt: now, pending: [] };
    this.byId.set(context.id, context);
    return context;
  }

  end(context: LoginContext): void {
    this.byId.delete(context.id);
  }

  private evict(now: number): void {
    for (const [id, c] of this.byId) {
      if (now - c.createdAt <= this.ttl && this.byId.size < this.max) break;
      this.byId.delete(id);
    }
  }
}
