import { randomBytes } from "node:crypto";
import type { UserRecord } from "../../store/records.ts";
import { compilePolicy, emptyPolicy, policyHash, type GroupPolicy } from "../group-policy.ts";
import type { EventBus } from "../events.ts";
import type { GroupService } from "../groups.ts";
import type { Session, SessionRegistry } from "../sessions.ts";
import { staticAddressOf, type UserService } from "../users.ts";
import type { AuthStats } from "./auth-stats.ts";
import type { AuthStep, LoginContext } from "./auth-step.ts";
import type { LoginForm } from "./login-form.ts";

export interface LoginRequest {
  /** The context a previous answer handed out (opaque auth-handle or context cookie), if any. */
  contextId?: string;
  /** "init" starts over (PROTOCOL.md §2.6: a group choice restarts with a new init). */
  kind: "init" | "answer";
  answers: ReadonlyMap<string, string>;
  group?: string;
  /** Where the request came from, for logs. */
  peer: string;
}

export type LoginOutcome =
  | { kind: "form"; contextId: string; form: LoginForm }
  | { kind: "success"; session: Session; token: string }
  | { kind: "refused"; message: string };

export interface LoginFlowOptions {
  users: UserService;
  groups: GroupService;
  sessions: SessionRegistry;
  stats: AuthStats;
  /** The pipeline of a group (password only today). */
  stepsFor(group: string | undefined): AuthStep[];
  now(): number;
  log(message: string): void;
  /** Where auth outcomes are announced (the control plane's event bus). */
  events?: EventBus;
  /** Leases exactly this client address (a user's static address); false when taken or outside the pool. */
  reserveAddress?(address: number): boolean;
  contextTtlMs?: number;
  maxContexts?: number;
}

/** The group option meaning "the user's own first group"; group names cannot contain parentheses. */
export const DEFAULT_GROUP_CHOICE = "(default)";

/** Runs a login through its group's pipeline of steps and creates the session at the end. */
export class LoginFlow {
  private readonly contexts = new Map<string, LoginContext>();
  private readonly ttl: number;
  private readonly maxContexts: number;

  constructor(private readonly o: LoginFlowOptions) {
    this.ttl = o.contextTtlMs ?? 5 * 60_000;
    this.maxContexts = o.maxContexts ?? 10_000;
  }

  async handle(request: LoginRequest): Promise<LoginOutcome> {
    const context = this.contextFor(request);
    if (request.group === DEFAULT_GROUP_CHOICE) context.requestedGroup = undefined;
    else if (request.group !== undefined && request.group !== "") context.requestedGroup = request.group;
    if (request.kind === "init") {
      context.stepIndex = 0;
      context.user = undefined;
      return this.prompt(context);
    }
    const steps = this.o.stepsFor(context.requestedGroup);
    const step = steps[context.stepIndex];
    if (!step) return this.prompt(this.restart(context));
    const result = await step.submit(context, request.answers);
    if (result.kind === "retry") {
      this.fail(result.reason, request, context);
      return this.prompt(this.restart(context), result.error);
    }
    if (result.kind === "refused") {
      this.fail(result.reason, request, context);
      this.contexts.delete(context.id);
      return { kind: "refused", message: result.error };
    }
    context.user = result.user;
    context.stepIndex++;
    if (context.stepIndex < steps.length) return this.prompt(context);
    return this.complete(context, request);
  }

  private complete(context: LoginContext, request: LoginRequest): LoginOutcome {
    const user = context.user!;
    const group = this.resolveGroup(user, context.requestedGroup);
    if ("error" in group) {
      this.fail(group.reason, request, context);
      return this.prompt(this.restart(context), group.error);
    }
    const live = this.o.sessions.list().filter((s) => s.user === user.name).length;
    if (group.policy.maxSessionsPerUser !== undefined && live >= group.policy.maxSessionsPerUser) {
      this.fail("too_many_sessions", request, context);
      this.contexts.delete(context.id);
      return { kind: "refused", message: `You already have ${live} session(s), the most group ${group.name} allows: disconnect one first.` };
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
    });
    if (staticAddress !== undefined) session.address = staticAddress;
    this.o.users.recordSuccess(user.name);
    this.o.stats.successes++;
    this.o.events?.emit({ type: "auth.success", user: user.name, group: group.name, session: session.id, peer: request.peer });
    this.o.log(`login ok user=${user.name} group=${group.name || "-"} session=${session.id} peer=${request.peer}`);
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
      this.o.log(`group ${name} cannot be used: ${policy.error.message}`);
      return { error: `Group ${name} is misconfigured: contact your administrator.`, reason: "group_invalid" };
    }
    return { name, policy: policy.value };
  }

  private prompt(context: LoginContext, error?: string): LoginOutcome {
    const step = this.o.stepsFor(context.requestedGroup)[context.stepIndex]!;
    const groupNames = this.o.groups.list().map((g) => g.name);
    const form: LoginForm = {
      authId: context.stepIndex === 0 ? "main" : "challenge",
      message: step.message(context),
      error,
      fields: step.fields(context),
      // Only the first step offers the choice; one group is no choice (and avoids a second init).
      // The first option stands for "my own first group" (ocserv's default-select-group), so a
      // client that picks nothing (openconnect --non-inter without --authgroup) is not stuck.
      groupChoice:
        context.stepIndex === 0 && groupNames.length > 1
          ? { options: [DEFAULT_GROUP_CHOICE, ...groupNames], selected: context.requestedGroup ?? DEFAULT_GROUP_CHOICE }
          : undefined,
    };
    return { kind: "form", contextId: context.id, form };
  }

  private restart(context: LoginContext): LoginContext {
    context.stepIndex = 0;
    context.user = undefined;
    return context;
  }

  private fail(reason: string, request: LoginRequest, context: LoginContext): void {
    this.o.stats.failure(reason);
    this.o.events?.emit({ type: "auth.failure", user: context.lastUserName ?? null, reason, peer: request.peer });
    this.o.log(`login failed reason=${reason} user=${context.lastUserName ?? "-"} peer=${request.peer}`);
  }

  private contextFor(request: LoginRequest): LoginContext {
    const now = this.o.now();
    const existing = request.contextId ? this.contexts.get(request.contextId) : undefined;
    if (existing && now - existing.createdAt <= this.ttl) return existing;
    if (existing) this.contexts.delete(existing.id);
    this.evict(now);
    const context: LoginContext = { id: randomBytes(16).toString("base64url"), createdAt: now, stepIndex: 0 };
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
