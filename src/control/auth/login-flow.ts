import { RateLimitedLog } from "../rate-limited-log.ts";
import type { UserRecord } from "../../store/records.ts";
import { effectivePolicy, type DefaultRates, type GroupDefaults } from "../effective-policy.ts";
import { emptyPolicy, type GroupPolicy } from "../group-policy.ts";
import { CompiledPolicies } from "../compiled-policies.ts";
import type { EventBus } from "../events.ts";
import type { GroupService } from "../groups.ts";
import type { Session, SessionRegistry } from "../sessions.ts";
import { staticAddressOf, type UserService } from "../users.ts";
import { chainStartingWith, DEFAULT_AUTH, formatAuthMethods, parseAuthMethods, type AuthFactor, type AuthMethods } from "./auth-methods.ts";
import type { AuthStats } from "./auth-stats.ts";
import type { AuthStep, LoginClient, LoginContext, StepResult } from "./auth-step.ts";
import { LoginContexts } from "./login-contexts.ts";
import { LoginFailures, type Refused } from "./login-failures.ts";
import type { LoginGuard } from "./login-guard.ts";
import type { LoginForm } from "./login-form.ts";
import { afterGroupRefused, afterNotAccepted, afterWrongAnswer, type RetryDecision } from "./retry-policy.ts";
import { logLine, type Log } from "../../log/log-line.ts";

export interface LoginRequest {
  /** The context a previous answer handed out (opaque auth-handle or context cookie), if any. */
  contextId?: string;
  /** "init" starts over (docs/protocol.md §2.6: a group choice restarts with a new init). */
  kind: "init" | "answer";
  answers: ReadonlyMap<string, string>;
  group?: string;
  client: LoginClient;
}

export type LoginOutcome =
  | { kind: "form"; contextId: string; form: LoginForm }
  | { kind: "success"; session: Session; token: string }
  | Refused;

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
  /** True while the gateway drains (gw drain): every new login is refused. */
  draining?(): boolean;
  /** Refuses an account its limits stop (expired, data quota used up): the reason code and what the client shows. */
  accountCheck?(user: UserRecord): { reason: string; message: string } | undefined;
  /** Sessions per user when the group sets no limit (a live setting); 0 or absent: no limit. */
  defaultMaxSessionsPerUser?(): number;
  /** Rate limits for sessions whose user and group set none (live settings defaultRateUp/defaultRateDown). */
  defaultRates?(): DefaultRates;
  /** What a group leaves out (the settings' groupDefaults, a live setting); absent: nothing. */
  groupDefaults?(): GroupDefaults;
  contextTtlMs?: number;
  maxContexts?: number;
}

/** The group option meaning "the user's own first group"; group names cannot contain parentheses. */
export const DEFAULT_GROUP_CHOICE = "(default)";

const NO_ANSWERS: ReadonlyMap<string, string> = new Map();

/** After a step: the login's answer now, or on to the next step (`error`: for its form, replacing the last). */
type Next = { answer: LoginOutcome } | { error?: string };
const ONWARD: Next = {};

/**
 * Steps one request may run. The longest real path is a few (certificate, a wrong password, the
 * certificate again, the password form); a step without fields whose policy starts over on its
 * own failure would run forever, so the loop refuses instead.
 */
const MAX_STEPS_PER_REQUEST = 16;

/**
 * Runs a login through its group's pipeline of steps and creates the session at the end. The
 * pipeline is one loop: what differs between factors is each step's (its fields, its retry
 * policy); every refusal goes through LoginFailures.refuse.
 */
export class LoginFlow {
  private readonly contexts: LoginContexts;
  /** Sessions with the same effective policy share its compiled form (memory per session). */
  private readonly compiled = new CompiledPolicies();
  private readonly failures: LoginFailures;
  /** "The gateway is full" is said once per interval, however many clients hear it. */
  private readonly full: RateLimitedLog;
  /** So is a step's refusal that a crowd meets at once (the password hasher busy in a login storm). */
  private readonly crowd: RateLimitedLog;

  constructor(private readonly o: LoginFlowOptions) {
    this.contexts = new LoginContexts({ now: o.now, ttlMs: o.contextTtlMs, maxContexts: o.maxContexts });
    this.failures = new LoginFailures({ stats: o.stats, guard: o.guard, events: o.events, log: o.log, endLogin: (context) => this.contexts.end(context) });
    this.full = new RateLimitedLog(10_000, o.now, o.log);
    this.crowd = new RateLimitedLog(10_000, o.now, o.log);
  }

  async handle(request: LoginRequest): Promise<LoginOutcome> {
    const context = this.contexts.open(request.contextId);
    if (request.group === DEFAULT_GROUP_CHOICE) context.requestedGroup = undefined;
    else if (request.group !== undefined && request.group !== "") context.requestedGroup = request.group;
    const ban = this.o.guard?.check(request.client.ip, typedName(request) ?? context.lastUserName);
    if (ban) {
      const refusal = { reason: "banned", message: ban.message, retryAfterSeconds: ban.retryAfterSeconds, counts: false, endsLogin: false };
      return this.failures.refuse(refusal, request.client, context);
    }
    if (request.kind === "init") restart(context);
    return this.run(context, request);
  }

  /**
   * The pipeline: steps run in turn until one needs a form, the login completes, or it is refused.
   * The request's answers go to the first step only, if it asks for them; steps without fields
   * (a certificate) run without asking.
   */
  private async run(context: LoginContext, request: LoginRequest): Promise<LoginOutcome> {
    let answers = request.kind === "answer" ? request.answers : undefined;
    let error: string | undefined;
    for (let turn = 0; turn < MAX_STEPS_PER_REQUEST; turn++) {
      const factor = this.currentFactor(context, request);
      if (factor === undefined) return this.complete(context, request);
      const step = this.o.steps[factor];
      if (!step) {
        const message = `This gateway cannot check ${factor} logins: contact your administrator.`;
        return this.failures.refuse({ reason: "method_unavailable", message, endsLogin: false }, request.client, context);
      }
      const asks = step.fields(context).length > 0;
      if (asks && !answers) return this.prompt(context, step, request, error);
      const result = await step.submit(context, asks ? answers! : NO_ANSWERS, request.client);
      answers = undefined;
      const next = this.settle(context, request, step, result);
      if ("answer" in next) return next.answer;
      error = next.error ?? error;
    }
    this.o.log(logLine`login of ${context.lastUserName ?? "-"} ran ${MAX_STEPS_PER_REQUEST} steps without asking: a step without fields starts over on its own failure`);
    const message = "This login cannot complete on this gateway: contact your administrator.";
    return this.failures.refuse({ reason: "login_loop", message, counts: false }, request.client, context);
  }

  /** What a step's result leads to. */
  private settle(context: LoginContext, request: LoginRequest, step: AuthStep, result: StepResult): Next {
    if (result.kind === "refused") {
      const { reason, error: message, counts, retryAfterSeconds, crowd } = result;
      const answer = this.failures.refuse({ reason, message, counts, retryAfterSeconds, logged: !crowd }, request.client, context);
      if (crowd) this.crowd.say(logLine`login refused reason=${reason}: ${message}`);
      return { answer };
    }
    if (result.kind === "retry") {
      context.wrongAnswers = (context.wrongAnswers ?? 0) + 1;
      const decision = afterWrongAnswer(step.retry, {
        wrongAnswers: context.wrongAnswers,
        canIdentifyOtherwise: () => !context.user && [...this.identifyingFactors(context.requestedGroup)].some((f) => f !== step.factor),
      });
      return this.follow(decision, { reason: result.reason, message: result.error }, context, request, step);
    }
    if (context.user) {
      context.pending.shift();
      return ONWARD;
    }
    return this.identify(context, request, step, result.user);
  }

  /** The user is known now: their group decides which factors must follow. */
  private identify(context: LoginContext, request: LoginRequest, step: AuthStep, user: UserRecord): Next {
    context.user = user;
    context.identifiedBy = step.factor;
    const group = this.resolveGroup(user, context.requestedGroup);
    if ("error" in group) return this.follow(afterGroupRefused(step.retry), { reason: group.reason, message: group.error }, context, request, step);
    const methods = this.methodsOf(group.policy.auth);
    const chain = chainStartingWith(methods, step.factor);
    if (!chain) {
      const decision = afterNotAccepted(step.retry, (f) => chainStartingWith(methods, f) !== undefined);
      if (decision.kind === "startOver") {
        // Not a failure: the client offered what this group does not take (a certificate, one per client).
        setAside(context, step.factor);
        restart(context);
        return ONWARD;
      }
      const name = group.name || "(none)";
      const message = `Group ${name} does not accept a ${step.factor} login: it requires ${formatAuthMethods(methods)}.`;
      return { answer: this.failures.refuse({ reason: "method_not_allowed", message }, request.client, context) };
    }
    context.group = group;
    context.pending = chain.slice(1);
    return ONWARD;
  }

  /** Carries out a retry decision for a failure of `step`; the failure is recorded either way. */
  private follow(decision: RetryDecision, failure: { reason: string; message: string }, context: LoginContext, request: LoginRequest, step: AuthStep): Next {
    if (decision.kind === "end") {
      return { answer: this.failures.refuse({ reason: failure.reason, message: decision.message ?? failure.message }, request.client, context) };
    }
    this.failures.note(failure, request.client, context);
    if (decision.kind === "startOver") {
      if (decision.setAside) setAside(context, step.factor);
      restart(context);
    }
    return { error: failure.message };
  }

  /** The next factor: the identifying one until the user is known, then what the group's chain requires. */
  private currentFactor(context: LoginContext, request: LoginRequest): AuthFactor | undefined {
    if (context.user) return context.pending[0];
    const allowed = this.identifyingFactors(context.requestedGroup);
    const certificate = request.client.certificate;
    if (allowed.has("certificate") && !context.setAside?.has("certificate") && certificate) return "certificate";
    if (allowed.has("password")) return "password";
    if (allowed.has("saml")) return "saml";
    return "certificate"; // certificate-only and none sent: its step says what is missing, once
  }

  /** Factors that may identify a user of this group (any group's, when none was chosen). */
  private identifyingFactors(group: string | undefined): Set<AuthFactor> {
    const chosen = group === undefined ? undefined : this.o.groups.policyOf(group);
    const policies = chosen === undefined ? this.o.groups.policies() : chosen.ok ? [chosen.value] : [];
    const firsts = new Set<AuthFactor>();
    for (const policy of policies) for (const chain of this.methodsOf(policy.auth)) firsts.add(chain[0]!);
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
    if (this.o.draining?.()) {
      const message = "The gateway is shutting down for maintenance: try again in a few minutes.";
      return this.failures.refuse({ reason: "draining", message, counts: false }, request.client, context);
    }
    const limited = this.o.accountCheck?.(user);
    if (limited) return this.failures.refuse({ reason: limited.reason, message: limited.message, counts: false }, request.client, context);
    const cap = this.o.maxSessions?.() ?? 0;
    if (cap > 0 && this.o.sessions.size >= cap) {
      const message = `The gateway is at its limit of ${cap} sessions: try again later.`;
      const refused = this.failures.refuse({ reason: "gateway_full", message, counts: false, logged: false }, request.client, context);
      this.full.say(logLine`login refused: the gateway holds ${this.o.sessions.size} sessions, its cap (maxSessions ${cap})`);
      return refused;
    }
    // The gateway's defaults under the group's policy under the user's overrides (ocserv's config-per-user),
    // the user's rules after the group's, rates user > group > default; a static address is handed to the session.
    const overrides = this.o.users.overridesOf(user);
    const policy: GroupPolicy = effectivePolicy(group.policy, overrides, { ...this.o.defaultRates?.(), group: this.o.groupDefaults?.() });
    // Detached sessions (a crashed client) do not count; they are checked again when they come back.
    const limit = policy.maxSessionsPerUser ?? this.o.defaultMaxSessionsPerUser?.() ?? 0;
    const live = limit > 0 ? this.o.sessions.liveCountOf(user.name) : 0;
    if (limit > 0 && live >= limit) {
      const whose = overrides.maxSessionsPerUser !== undefined ? "your account" : group.policy.maxSessionsPerUser !== undefined ? `group ${group.name}` : "this gateway";
      const message = `You already have ${live} session(s), the most ${whose} allows: disconnect one first.`;
      return this.failures.refuse({ reason: "too_many_sessions", message }, request.client, context);
    }
    const staticAddress = staticAddressOf(overrides);
    if (staticAddress !== undefined && this.o.reserveAddress && !this.o.reserveAddress(staticAddress)) {
      const message = `Your fixed address ${overrides.staticAddress} is in use or outside the address pool: contact your administrator.`;
      return this.failures.refuse({ reason: "static_address_unavailable", message }, request.client, context);
    }
    this.contexts.end(context);
    const compiled = this.compiled.of(policy);
    const { session, token } = this.o.sessions.create({
      user: user.name,
      group: group.name,
      policy: compiled.policy,
      configHash: compiled.hash,
      maxLivePerUser: limit,
    });
    if (staticAddress !== undefined) session.address = staticAddress;
    this.o.users.recordSuccess(user.name);
    this.o.guard?.success(request.client.ip, user.name);
    this.o.stats.successes++;
    this.o.events?.emit({ type: "auth.success", user: user.name, group: group.name, session: session.id, peer: request.client.peer });
    // password_check_ms: what the argon2id check cost this login (- when no password was asked).
    const checkMs = context.passwordCheckMs?.toFixed(1) ?? "-";
    this.o.log(logLine`login ok user=${user.name} group=${group.name || "-"} session=${session.id} peer=${request.client.peer} password_check_ms=${checkMs}`);
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
    if (sso && !sso.ok) return this.failures.refuse({ reason: sso.error.code, message: sso.error.message, counts: false }, request.client, context);
    const first = !context.user;
    const groupNames = this.o.groups.names();
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
}

/** Back to the identifying step: the user, their group and the factors still due are forgotten. */
function restart(context: LoginContext): void {
  context.user = undefined;
  context.identifiedBy = undefined;
  context.group = undefined;
  context.pending = [];
  context.wrongAnswers = undefined;
}

/** This factor is not tried again in this login (restart keeps that). */
function setAside(context: LoginContext, factor: AuthFactor): void {
  (context.setAside ??= new Set()).add(factor);
}

function typedName(request: LoginRequest): string | undefined {
  const name = request.answers.get("username")?.trim();
  return name ? name : undefined;
}
