import { randomBytes } from "node:crypto";
import { err, ok, type Result } from "../../../errors.ts";
import type { SamlAssertion, SamlProvider } from "./saml-provider.ts";
import { UsedAssertions } from "./used-assertions.ts";
import { logLine, type Log } from "../../../log/log-line.ts";

export type BrowserMode = "external" | "webview";

/** One browser login for one login context (one openconnect run). */
export interface SamlAttempt {
  /** Random: in the login URL and the RelayState; it names the attempt, never the context. */
  readonly handle: string;
  readonly contextId: string;
  readonly browserMode: BrowserMode;
  /** The client's X-AnyConnect-STRAP-DH-Pubkey (external mode). */
  readonly dhPubkey?: string;
  readonly createdAt: number;
  requestId?: string;
  /** Set by the ACS: the one-time token the client posts back, and what the IdP said. */
  token?: string;
  outcome?: Result<SamlAssertion>;
}

export interface SamlLoginsOptions {
  provider: SamlProvider;
  now(): number;
  log: Log;
  /** How long a browser login may take, from the form to the posted token. Default 5 minutes. */
  ttlMs?: number;
  maxAttempts?: number;
}

/**
 * The state of browser logins between the VPN client, the browser and the IdP: the attempt a
 * login context gets with its SSO form, the AuthnRequest sent for it, the assertion that
 * answered it (validated once, used once), and the one-time token that carries the result back
 * to the client.
 */
export class SamlLogins {
  private readonly byHandle = new Map<string, SamlAttempt>();
  private readonly used: UsedAssertions;
  private readonly ttl: number;
  private readonly max: number;

  constructor(private readonly o: SamlLoginsOptions) {
    this.ttl = o.ttlMs ?? 5 * 60_000;
    this.max = o.maxAttempts ?? 10_000;
    this.used = new UsedAssertions(o.now);
  }

  /** The context's open attempt (same mode and key), or a new one. */
  begin(contextId: string, browserMode: BrowserMode, dhPubkey?: string): SamlAttempt {
    const now = this.o.now();
    for (const a of this.byHandle.values()) {
      if (a.contextId === contextId && !a.token && a.browserMode === browserMode && a.dhPubkey === dhPubkey && now - a.createdAt <= this.ttl) return a;
    }
    this.evict(now);
    const attempt: SamlAttempt = { handle: randomToken(), contextId, browserMode, dhPubkey, createdAt: now };
    this.byHandle.set(attempt.handle, attempt);
    return attempt;
  }

  /** The IdP URL for the browser, with a fresh AuthnRequest (a reload sends a new one). */
  async loginUrl(handle: string): Promise<Result<string>> {
    const attempt = this.open(handle);
    if (!attempt.ok) return attempt;
    const requestId = `_${randomBytes(20).toString("hex")}`;
    const url = await this.o.provider.authorizeUrl(requestId, attempt.value.handle);
    if (url.ok) attempt.value.requestId = requestId;
    return url;
  }

  /**
   * The assertion consumer service. An unknown, expired or finished RelayState is an error with
   * no attempt (nothing to tell a client). Otherwise the attempt gets its token and outcome,
   * valid or not: the client learns the result when it posts the token.
   */
  async consume(samlResponse: string, relayState: string): Promise<Result<SamlAttempt>> {
    const open = this.open(relayState);
    if (!open.ok) return open;
    const attempt = open.value;
    attempt.token = randomToken();
    attempt.outcome = await this.check(attempt, samlResponse);
    this.o.log(
      attempt.outcome.ok
        ? logLine`saml assertion accepted user=${attempt.outcome.value.userName} issuer=${attempt.outcome.value.issuer} id=${attempt.outcome.value.assertionId}`
        : logLine`saml assertion refused: ${attempt.outcome.error.message}`,
    );
    return ok(attempt);
  }

  /** The client posts the token: the assertion it stands for, once. */
  redeem(contextId: string, token: string): Result<SamlAssertion> {
    const now = this.o.now();
    for (const [handle, a] of this.byHandle) {
      if (a.contextId !== contextId || a.token === undefined || a.token !== token) continue;
      this.byHandle.delete(handle);
      if (now - a.createdAt > this.ttl) return err("sso_token_expired", "The single sign-on took too long: log in again.");
      return a.outcome ?? err("sso_token_invalid", "The single sign-on did not complete: log in again.");
    }
    return err("sso_token_invalid", "The single sign-on token is unknown, used or expired: log in again.");
  }

  private async check(attempt: SamlAttempt, samlResponse: string): Promise<Result<SamlAssertion>> {
    if (!attempt.requestId) return err("saml_unsolicited", "the browser posted an assertion before this login sent a request");
    const assertion = await this.o.provider.validate(samlResponse);
    if (!assertion.ok) return assertion;
    if (assertion.value.inResponseTo !== attempt.requestId) {
      return err("saml_invalid", "the SAML response answers another login's request (InResponseTo)");
    }
    if (!this.used.claim(assertion.value.issuer, assertion.value.assertionId, assertion.value.expiresAt)) {
      return err("saml_replayed", "the SAML assertion was used already (one-time use)");
    }
    return assertion;
  }

  private open(handle: string): Result<SamlAttempt> {
    const attempt = this.byHandle.get(handle);
    if (!attempt || attempt.token !== undefined) return err("sso_unknown_login", "This sign-on is unknown or already finished: start again from your VPN client.");
    if (this.o.now() - attempt.createdAt > this.ttl) {
      this.byHandle.delete(handle);
      return err("sso_unknown_login", "This sign-on has expired: start again from your VPN client.");
    }
    return ok(attempt);
  }

  private evict(now: number): void {
    for (const [handle, a] of this.byHandle) {
      if (now - a.createdAt <= this.ttl && this.byHandle.size < this.max) break;
      this.byHandle.delete(handle);
    }
  }
}

/** 32 random bytes as hex: alphanumeric, as the external-browser hand-off requires (docs/protocol.md §4.3). */
function randomToken(): string {
  return randomBytes(32).toString("hex");
}
