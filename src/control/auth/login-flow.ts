import { RateLimitedLog } from "../rate-limited-log.ts";
import { randomBytes } from "node:crypto";
import type { UserRecord } from "../../store/records.ts";
import { compilePolicy, emptyPolicy, policyHash, type GroupPolicy } from "../group-policy.ts";
import type { EventBus } from "../events.ts";
import type { GroupService } from "../groups.ts";
import type { Session, SessionRegistry } from "../sessions.ts";
import { staticAddressOf, type UserService } from "../users.ts";
import { chainStartingWith, DEFAULT_AUTH, formatAuthMethods, parseAuthMethods, type AuthFactor, type AuthMethods } from "./auth-methods.ts";
import type { AuthStats } from "./auth-stats.ts";
import type { AuthStep, LoginClient, LoginContext, StepResult } from "./auth-step.ts";
import type { LoginGuard } from "./login-guard.ts";
import type { LoginForm } from "./login-form.ts";
import { logLine, type Log } from "../../log/log-line.ts";

export interface LoginRequest {
  /** The context a previous answer handed out (opaque auth-handle or context cookie), if any. */
  contextId?: string;
  /** "init" starts over (PROTOCOL.md §2.6: a group choice restarts with a new init). */
  kind: "init" | "answer";
  answers: ReadonlyMap<string, string>;
  group?: string;
  client: LoginClient;
}

export type LoginOutcome =
  | { kind: "form"; contextId: string; form: LoginForm }
  | { kind: "success"; session: Session; token: string }
  /** retryAfterSeconds: the client is banned for that long (brute-force protection). */
  | { kind: "refused"; message: string; retryAfterSeconds?: number };

export interface LoginFlowOptions {
  users: UserService;
  groups: GroupService;
  sessions: SessionRegistry;
  stats: AuthStats;
  /** One step per factor the gateway can check; a group requiring a missing one cannot log in. */
  steps: Partial<Record<AuthFactor, AuthStep>>;
  /** Brute-force protection: failed logins per source IP and per user name. */
  guard?: LoginGuard;
  now(): number;
  log: Log;
  /** Where auth outcomes are announced (the control plane's event bus). */
  events?: EventBus;
  /** Leases exactly this client address (a user's static address); false when taken or outside the pool. */
  reserveAddress?(address: number): boolean;
  /** Sessions the gateway holds at most (its open files bound them); 0 or absent: no cap. */
  maxSessions?(): number;
  /** Sessions per user when the group sets no limit (a live setting); 0 or absent: no limit. */
  defaultMaxSessionsPerUser?(): number;
  contextTtlMs?: number;
  maxContexts?: number;
}

/** Wrong one-time codes allowed in one login before it must start over (with the password). */
export const MAX_CODE_ATTEMPTS = 3;

/** The group option meaning "the user's own first group"; group names cannot contain parentheses. */
export const DEFAULT_GROUP_CHOICE = "(default)";

/** Runs a login through its group's pipeline of steps and creates the session at the end. */
export class LoginFlow {
  private readonly contexts = new Map<string, LoginContext>();
  private readonly ttl: number;
  private readonly maxContexts: number;
  /** "The gateway is full" is said once per interval, however many clients hear it. */
  private readonly full: RateLimitedLog;

  constructor(private readonly o: LoginFlowOptions) {
    this.ttl = o.contextTtlMs ?? 5 * 60_000;
    this.maxContexts = o.maxContexts ?? 10_000;
    this.full = new RateLimitedLog(10_000, o.now, o.log);
  }

  async handle(request: LoginRequest): Promise<LoginOutcome> {
    const context = this.contextFor(request);
    if (request.group === DEFAULT_GROUP_CHOICE) context.requestedGroup = undefined;
    else if (request.group !== undefined && request.group !== "") context.requestedGroup = request.group;
    const ban = this.o.guard?.check(request.client.ip, typedName(request) ?? context.lastUserName);
    if (ban) {
      this.fail("banned", request, context, false);
      return { kind: "refused", message: ban.message, retryAfterSeconds: ban.retryAfterSeconds };
    }
    if (request.kind === "init") return this.advance(this.restart(context), request);
    const factor = this.currentFactor(context, request);
    const step = factor && this.o.steps[factor];
    if (!step || step.fields(context).length === 0) return this.advance(context, request);
    return this.apply(context, request, factor, await step.submit(context, request.answers, request.client));
  }

  /** Runs the steps that need no answer (a certificate) until one needs a form, or the login completes. */
  private async advance(context: LoginContext, request: LoginRequest, error?: string): Promise<LoginOutcome> {
    const factor = this.currentFactor(context, request);
    if (factor === undefined) return this.complete(context, request);
    const step = this.o.steps[factor];
    if (!step) {
      this.fail("method_unavailable", request, context);
      return { kind: "refused", message: `This gateway cannot check ${factor} logins: contact your administrator.` };
    }
    if (step.fields(context).length > 0) return this.prompt(context, step, request, error);
    return this.apply(context, request, factor, await step.submit(context, new Map(), request.client), error);
  }

  /** Records a step's result and says what comes next; `carried`: the previous attempt's error, for the next form. */
  private async apply(context: LoginContext, request: LoginRequest, factor: AuthFactor, result: StepResult, carried?: string): Promise<LoginOutcome> {
    if (result.kind === "retry" && factor === "certificate") {
      // A bad or missing certificate: a password (or SSO) may still identify the user, if allowed.
      context.certificateFailed = true;
      const others = this.identifyingFactors(context.requestedGroup);
      others.delete("certificate");
      if (context.user || others.size === 0) result = { kind: "refused", error: result.error, reason: result.reason };
    }
    if (result.kind === "retry" && context.user && factor === "otp") {
      // A wrong code asks for the code again (not the password), a few times per login.
      this.fail(result.reason, request, context);
      context.retries = (context.retries ?? 0) + 1;
      if (context.retries < MAX_CODE_ATTEMPTS) return this.advance(context, request, result.error);
      this.contexts.delete(context.id);
      return { kind: "refused", message: `Too many wrong one-time codes (${MAX_CODE_ATTEMPTS}): log in again.` };
    }
    if (result.kind === "retry") {
      this.fail(result.reason, request, context);
      return this.advance(this.restart(context), request, result.error);
    }
    if (result.kind === "refused") {
      this.fail(result.reason, request, context);
      this.contexts.delete(context.id);
      return { kind: "refused", message: result.error };
    }
    if (context.user) {
      context.pending.shift();
      return this.advance(context, request, carried);
    }
    // The user is known now: their group decides which factors must follow.
    context.user = result.user;
    context.identifiedBy = factor;
    const group = this.resolveGroup(result.user, context.requestedGroup);
    if ("error" in group) {
      this.fail(group.reason, request, context);
      if (factor === "certificate") {
        // Asking again would present the same certificate: say so once and stop.
        this.contexts.delete(context.id);
        return { kind: "refused", message: group.error };
      }
      return this.advance(this.restart(context), request, group.error);
    }
    const methods = this.methodsOf(group.policy.auth);
    const chain = chainStartingWith(methods, factor);
    if (!chain && factor === "certificate" && chainStartingWith(methods, "password")) {
      // A certificate the client presents anyway (one per client, not per gateway): log in with the password.
      context.certificateFailed = true;
      return this.advance(this.restart(context), request, carried);
    }
    if (!chain) {
      this.fail("method_not_allowed", request, context);
      this.contexts.delete(context.id);
      const name = group.name || "(none)";
      return { kind: "refused", message: `Group ${name} does not accept a ${factor} login: it requires ${formatAuthMethods(methods)}.` };
    }
    context.group = group;
    context.pending = chain.slice(1);
    return this.advance(context, request, carried);
  }

  /** The next factor: the identifying one until the user is known, then what the group's chain requires. */
  private currentFactor(context: LoginContext, request: LoginRequest): AuthFactor | undefined {
    if (context.user) return context.pending[0];
    const allowed = this.identifyingFactors(context.requestedGroup);
    const certificate = request.client.certificate;
    if (allowed.has("certificate") && !context.certificateFailed && certificate) return "certificate";
    if (allowed.has("password")) return "password";
    if (allowed.has("saml")) return "saml";
    return "certificate"; // certificate-only and none sent: its step says what is missing, once
  }

  /** Factors that may identify a user of this group (any group's, when none was chosen). */
  private identifyingFactors(group: string | undefined): Set<AuthFactor> {
    const policies = group !== undefined ? [this.o.groups.policyOf(group)] : this.o.groups.list().map((g) => ({ ok: true as const, value: g.policy }));
    const firsts = new Set<AuthFactor>();
    for (const p of policies) if (p.ok) for (const chain of this.methodsOf(p.value.auth)) firsts.add(chain[0]!);
    if (firsts.size === 0) firsts.add("password");
    return firsts;
  }

  private methodsOf(auth: string | undefined): AuthMethods {
    const parsed = parseAuthMethods(auth ?? DEFAULT_AUTH);
    return parsed.ok ? parsed.value : [["password"]];
  }

  private complete(context: LoginContext, request: LoginRequest): LoginOutcome {
    const user = context.user!;
    const group = context.group ?? { name: "", policy: emptyPolicy };
    const cap = this.o.maxSessions?.() ?? 0;
    if (cap > 0 && this.o.sessions.size >= cap) {
      this.fail("gateway_full", request, context, false, false);
      this.full.say(logLine`login refused: the gateway holds ${this.o.sessions.size} sessions, its cap (maxSessions ${cap})`);
      this.contexts.delete(context.id);
      return { kind: "refused", message: `The gateway is at its limit of ${cap} sessions: try again later.` };
    }
    // Detached sessions (a crashed client) do not count; they are checked again when they come back.
    const live = this.o.sessions.liveCountOf(user.name);
    const limit = group.policy.maxSessionsPerUser ?? this.o.defaultMaxSessionsPerUser?.() ?? 0;
    if (limit > 0 && live >= limit) {
      this.fail("too_many_sessions", request, context);
      this.contexts.delete(context.id);
      const whose = group.policy.maxSessionsPerUser !== undefined ? `group ${group.name}` : "this gateway";
      return { kind: "refused", message: `You already have ${live} session(s), the most ${whose} allows: disconnect one first.` };
    }
    // Per-user overrides: routes added to the group's; a static address is handed to the session.
    const overrides = this.o.users.overridesOf(user);
    const policy: GroupPolicy = overrides.routes.length
      ? { ...group.policy, routes: [...new Set([...group.policy.routes, ...overrides.routes])] }
      : group.policy;
    const staticAddress = staticAddressOf(overrides);
    if (staticAddress !== undefined && this.o.reserveAddress && !this.o.reserveAddress(staticAddress)) {
      this.fail("static_address_unavailable", request, context);
      this.contexts.delete(context.id);
      return { kind: "refused", message: `Your fixed address ${overrides.staticAddress} is in use or outside the address pool: contact your administrator.` };
    }
    this.contexts.delete(context.id);
    const { session, token } = this.o.sessions.create({
      user: user.name,
      group: group.name,
      policy: compilePolicy(policy),
      configHash: policyHash(policy),
      maxLivePerUser: limit,
    });
    if (staticAddress !== undefined) session.address = staticAddress;
    this.o.users.recordSuccess(user.name);
    this.o.guard?.success(request.client.ip, user.name);
    this.o.stats.successes++;
    this.o.events?.emit({ type: "auth.success", user: user.name, group: group.name, session: session.id, peer: request.client.peer });
    this.o.log(logLine`login ok user=${user.name} group=${group.name || "-"} session=${session.id} peer=${request.client.peer}`);
    return { kind: "success", session, token };
  }

  /** The requested group if the user is in it; else the user's first group; no group at all = defaults. */
  private resolveGroup(user: UserRecord, requested: string | undefined): { name: string; policy: GroupPolicy } | { error: string; reason: string } {
    const name = requested ?? user.groups[0];
    if (name === undefined) return { name: "", policy: emptyPolicy };
    if (!user.groups.includes(name)) {
      const known = this.o.groups.get(name).ok;
      const mine = user.groups.length ? `: choose one of ${user.groups.join(", ")}` : "";
      return known
        ? { error: `You are not a member of group ${name}${mine}.`, reason: "group_denied" }
        : { error: `There is no group named ${name}${mine}.`, reason: "group_unknown" };
    }
    const policy = this.o.groups.policyOf(name);
    if (!policy.ok) {
      this.o.log(logLine`group ${name} cannot be used: ${policy.error.message}`);
      return { error: `Group ${name} is misconfigured: contact your administrator.`, reason: "group_invalid" };
    }
    return { name, policy: policy.value };
  }

  private prompt(context: LoginContext, step: AuthStep, request: LoginRequest, error?: string): LoginOutcome {
    const sso = step.sso?.(context, request.client);
    if (sso && !sso.ok) {
      this.fail(sso.error.code, request, context, false);
      this.contexts.delete(context.id);
      return { kind: "refused", message: sso.error.message };
    }
    const first = !context.user;
    const groupNames = this.o.groups.list().map((g) => g.name);
    const form: LoginForm = {
      authId: first ? "main" : "challenge",
      message: step.message(context),
      error,
      fields: step.fields(context),
      sso: sso?.value,
      // Only the first step offers the choice; one group is no choice (and avoids a second init).
      // The first option stands for "my own first group" (ocserv's default-select-group), so a
      // client that picks nothing (openconnect --non-inter without --authgroup) is not stuck.
      groupChoice:
        first && groupNames.length > 1
          ? { options: [DEFAULT_GROUP_CHOICE, ...groupNames], selected: context.requestedGroup ?? DEFAULT_GROUP_CHOICE }
          : undefined,
    };
    return { kind: "form", contextId: context.id, form };
  }

  private restart(context: LoginContext): LoginContext {
    context.user = undefined;
    context.identifiedBy = undefined;
    context.group = undefined;
    context.pending = [];
    context.retries = undefined;
    return context;
  }

  /** `logged` false: the caller says it once per interval instead (a refusal a crowd can trigger). */
  private fail(reason: string, request: LoginRequest, context: LoginContext, counts = true, logged = true): void {
    this.o.stats.failure(reason);
    if (counts) this.o.guard?.failure(request.client.ip, context.lastUserName ?? context.user?.name);
    this.o.events?.emit({ type: "auth.failure", user: context.lastUserName ?? null, reason, peer: request.client.peer });
    if (logged) this.o.log(logLine`login failed reason=${reason} user=${context.lastUserName ?? "-"} peer=${request.client.peer}`);
  }

  private contextFor(request: LoginRequest): LoginContext {
    const now = this.o.now();
    const existing = request.contextId ? this.contexts.get(request.contextId) : undefined;
    if (existing && now - existing.createdAt <= this.ttl) return existing;
    if (existing) this.contexts.delete(existing.id);
    this.evict(now);
    const context: LoginContext = { id: randomBytes(16).toString("base64url"), createdAt: now, pending: [] };
    this.contexts.set(context.id, context);
    return context;
  }

  /** Bounded: expired contexts go first, then the oldest (a flood of inits cannot grow memory). */
  private evict(now: number): void {
    for (const [id, c] of this.contexts) {
      if (now - c.createdAt <= this.ttl && this.contexts.size < this.maxContexts) break;
      this.contexts.delete(id);
    }
  }
}

function typedName(request: LoginRequest): string | undefined {
  const name = request.answers.get("username")?.trim();
  return name ? name : undefined;
}
