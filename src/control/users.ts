import { z } from "zod";
import { err, ok, type Result } from "../errors.ts";
import { parseIpv4 } from "../net/ipv4.ts";
import { DEFAULT_HASH_COST, type Argon2idCost, type PasswordHasher } from "../runtime/password-hasher.ts";
import { DummyHash } from "./dummy-hash.ts";
import type { UserRecord } from "../store/records.ts";
import type { Store } from "../store/store.ts";
import type { Actor } from "./audit.ts";
import type { ChangeContext } from "./change-context.ts";
import { bitRateSchema } from "../firewall/policy-fields.ts";
import { ruleSchema } from "../firewall/rule.ts";
import { cidrText, dnsServers, ipv4Text, MAX_ROUTES, splitDnsDomains } from "./group-policy.ts";
import { groupNameSchema, userNameSchema } from "./names.ts";
import { isCryptHash, verifyCrypt } from "./auth/crypt.ts";
import { mergePatch } from "./patch.ts";
import { validationError } from "./zod-errors.ts";
import { quotaSchema } from "../firewall/quota.ts";
import { expiresAtSchema } from "./usage/expiry.ts";
import type { Rule } from "../firewall/rule.ts";
import { policyWarningSchema } from "./policy-views.ts";

export const MAX_PASSWORD_LENGTH = 1024;

/**
 * The user's own access rules (appended to the group's: see effective-policy.ts) and rate limits
 * (bits/s, winning over the group's): the same schemas as the group policy's fields.
 */
function userPolicyFields() {
  return {
    rules: z.array(ruleSchema).max(1000, "at most 1000 rules per user").optional(),
    rateUp: bitRateSchema.optional(),
    rateDown: bitRateSchema.optional(),
  };
}

/**
 * Policy fields a user may set over the group's (ocserv's config-per-user): absent = the group's.
 * Merged at login by effectivePolicy (src/control/effective-policy.ts).
 */
const policyOverrideFields = {
  /** Networks excluded from the tunnel for this user, besides the group's. */
  excludeRoutes: z.array(cidrText).max(MAX_ROUTES).optional(),
  /** DNS servers replacing the group's. */
  dns: dnsServers.optional(),
  /** Split-DNS domains replacing the group's. */
  splitDns: splitDnsDomains.optional(),
  dpdSeconds: z.number().int().min(0).max(3600).optional(),
  keepaliveSeconds: z.number().int().min(0).max(86400).optional(),
  mtu: z.number().int().min(576).max(9000).optional(),
  idleTimeoutSeconds: z.number().int().min(0).max(86400 * 30).optional(),
  sessionTimeoutSeconds: z.number().int().min(0).max(86400 * 365).optional(),
  maxSessionsPerUser: z.number().int().min(1).max(1000).optional(),
};
/** The override fields' names, for copying between the stored overrides and the document. */
const POLICY_OVERRIDE_KEYS = Object.keys(policyOverrideFields) as (keyof typeof policyOverrideFields)[];

/** Per-user overrides of the group policy, handed to the session at login. */
export const userOverridesSchema = z
  .object({
    /** Always this client address (it must lie in the pool; a second session of the user is refused). */
    staticAddress: ipv4Text.optional(),
    /** Networks added to the group's split-include routes for this user. */
    routes: z.array(cidrText).max(MAX_ROUTES).default([]),
    /** A data quota of the user's own: replaces the groups' (docs/usage.md). */
    quota: quotaSchema.optional(),
    /** From this moment (UTC ISO text) the account cannot log in and its sessions end. */
    expiresAt: expiresAtSchema.optional(),
    ...userPolicyFields(),
    ...policyOverrideFields,
  })
  .strict();
export type UserOverrides = z.infer<typeof userOverridesSchema>;

/** A user as written through the API (PUT body; POST adds the name). `password` is write-only. */
export const userDocumentSchema = z
  .object({
    groups: z.array(groupNameSchema).max(32).default([]),
    disabled: z.boolean().default(false),
    password: z.string().min(1, "the password is empty").max(MAX_PASSWORD_LENGTH).optional(),
    staticAddress: ipv4Text.optional(),
    routes: z.array(cidrText).max(MAX_ROUTES).default([]),
    quota: quotaSchema.optional(),
    /** A date (expires at 00:00 UTC that day) or an ISO 8601 time with a zone. */
    expiresAt: expiresAtSchema.optional(),
    ...userPolicyFields(),
    ...policyOverrideFields,
  })
  .strict();
export const newUserSchema = userDocumentSchema.extend({ name: userNameSchema }).strict();
export type UserDocument = z.infer<typeof userDocumentSchema>;
export type NewUserDocument = z.infer<typeof newUserSchema>;

export const userViewSchema = z.object({
  name: z.string(),
  groups: z.array(z.string()),
  disabled: z.boolean(),
  hasPassword: z.boolean(),
  staticAddress: z.string().optional(),
  routes: z.array(z.string()),
  /** The user's own rules (after the group's), present when there are some. */
  rules: z.array(ruleSchema).optional(),
  /** Rate limits of the user's sessions (bits/s), winning over the group's. */
  rateUp: z.number().int().optional(),
  rateDown: z.number().int().optional(),
  excludeRoutes: z.array(z.string()).optional(),
  dns: z.array(z.string()).optional(),
  splitDns: z.array(z.string()).optional(),
  dpdSeconds: z.number().int().optional(),
  keepaliveSeconds: z.number().int().optional(),
  mtu: z.number().int().optional(),
  idleTimeoutSeconds: z.number().int().optional(),
  sessionTimeoutSeconds: z.number().int().optional(),
  maxSessionsPerUser: z.number().int().optional(),
  failedLogins: z.number().int(),
  lastLoginAt: z.number().int().nullable(),
  createdAt: z.number().int(),
  /** One-time codes: enrolled since when (the secret is never shown again after enrolment). */
  otp: z.object({ enrolled: z.boolean(), since: z.number().int().nullable() }),
  /** The user's own quota (absent: the first of their groups' that has one applies). */
  quota: quotaSchema.optional(),
  expiresAt: z.string().optional(),
  /** The user's rules that can never decide anything (on GET of one user and on changes; absent when none). */
  warnings: z.array(policyWarningSchema).optional(),
});
export type UserView = z.infer<typeof userViewSchema>;

export interface NewUser {
  name: string;
  password?: string;
  groups: string[];
  disabled?: boolean;
  staticAddress?: string;
  routes?: string[];
  quota?: z.input<typeof quotaSchema>;
  expiresAt?: string;
  rules?: Rule[];
  rateUp?: number | string;
  rateDown?: number | string;
}

/** A password nobody can type: a user added without one cannot log in with a password. */
const NO_PASSWORD = "!";

/**
 * VPN users. Disabling or deleting a user ends the user's live sessions at once; other changes
 * (groups, overrides, password) apply from the next login.
 */
export class UserService {
  /**
   * Login times not yet written: a login must not wait for the store's fsync on the main thread
   * (every session's packets wait with it), so they are written together, about once a second.
   */
  private readonly loginStamps = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly hasher: PasswordHasher,
    private readonly now: () => number,
    private readonly context?: ChangeContext,
    /** argon2id's cost for new hashes (the settings passwordHashMemoryKiB and passwordHashPasses). */
    private readonly hashCost: () => Argon2idCost = () => DEFAULT_HASH_COST,
  ) {}

  /** For callers holding unchecked input (tests, scripts): validates once, then creates. The API validates at its edge and calls create. */
  async add(input: NewUser, actor: Actor = "local-cli"): Promise<Result<UserView>> {
    const doc = newUserSchema.safeParse(input);
    if (!doc.success) return validationError(doc.error, `user ${input.name}`);
    return this.create(doc.data, actor);
  }

  /** POST: a document its caller validated (newUserSchema). */
  async create(doc: NewUserDocument, actor: Actor): Promise<Result<UserView>> {
    if (this.store.getUser(doc.name)) return err("user_exists", `user ${doc.name} already exists`);
    const result = await this.write(doc.name, doc, actor, "create");
    return result.ok ? ok(result.value.user) : result;
  }

  /** PUT: creates the user or replaces every field; without `password` the current one is kept. The name comes from the path: checked here. */
  async replace(name: string, doc: UserDocument, actor: Actor): Promise<Result<{ user: UserView; created: boolean }>> {
    const parsedName = userNameSchema.safeParse(name);
    if (!parsedName.success) return validationError(parsedName.error, "user name");
    return this.write(name, doc, actor, "upsert");
  }

  /** PATCH: a merge patch (null removes staticAddress), validated as a whole. */
  async patch(name: string, patchInput: unknown, actor: Actor): Promise<Result<UserView>> {
    const record = this.store.getUser(name);
    if (!record) return notFound(name);
    const view = toView(record);
    const current: Record<string, unknown> = { groups: view.groups, disabled: view.disabled, routes: view.routes };
    if (view.staticAddress) current.staticAddress = view.staticAddress;
    if (view.quota) current.quota = view.quota;
    if (view.expiresAt) current.expiresAt = view.expiresAt;
    for (const key of ["rules", "rateUp", "rateDown"] as const) if (view[key] !== undefined) current[key] = view[key];
    for (const key of POLICY_OVERRIDE_KEYS) if (view[key] !== undefined) current[key] = view[key];
    const merged = mergePatch(current, patchInput);
    if (!merged.ok) return merged;
    const doc = userDocumentSchema.safeParse(merged.value);
    if (!doc.success) return validationError(doc.error, `user ${name}`);
    const result = await this.write(name, doc.data, actor, "update");
    return result.ok ? ok(result.value.user) : result;
  }

  /** One user, with their shadowed rules as warnings. */
  get(name: string): Result<UserView> {
    this.flushLoginStamps();
    const record = this.store.getUser(name);
    return record ? ok(this.withWarnings(toView(record))) : notFound(name);
  }

  list(): UserView[] {
    this.flushLoginStamps();
    return this.store.listUsers().map(toView);
  }

  remove(name: string, actor: Actor = "local-cli"): Result<void> {
    const removed = this.store.transaction(() => {
      const record = this.store.getUser(name);
      if (!record) return false;
      this.store.deleteUser(name);
      this.context?.audit.record(actor, "user.delete", name, toView(record), null);
      return true;
    });
    if (!removed) return notFound(name);
    this.context?.events.emit({ type: "user.deleted", name, actor });
    this.endSessionsOf(name);
    return ok(undefined);
  }

  /** The overrides stored for a user, re-validated (a hand-edited row never reaches a tunnel unchecked). */
  overridesOf(record: UserRecord): UserOverrides {
    return parseOverrides(record.overridesJson);
  }

  /**
   * Checks a password. Unknown users cost one hash verification too, so response time does
   * not tell which user names exist.
   */
  async verifyPassword(name: string, password: string): Promise<Result<UserRecord | undefined>> {
    const record = this.store.getUser(name);
    const known = record && record.passwordHash !== NO_PASSWORD;
    if (known && isCryptHash(record.passwordHash)) return this.verifyImported(record, password);
    if (password.length > MAX_PASSWORD_LENGTH) return ok(undefined);
    const phc = known ? ok(record.passwordHash) : await this.dummyHash();
    if (!phc.ok) return phc;
    // An error (server_busy: too many logins at once) is no answer about the password: the caller refuses without counting it.
    const valid = await this.hasher.verify(password, phc.value);
    if (!valid.ok) return valid;
    return ok(valid.value && known ? record : undefined);
  }

  /**
   * A crypt hash imported from an ocpasswd file: checked as ocserv did, then replaced by an
   * argon2id hash of the same password, so the weaker hash is gone after the first login.
   */
  private async verifyImported(record: UserRecord, password: string): Promise<Result<UserRecord | undefined>> {
    if (password.length > MAX_PASSWORD_LENGTH || !verifyCrypt(password, record.passwordHash)) return ok(undefined);
    const hash = await this.hasher.hash(password, this.hashCost());
    if (!hash.ok) return ok(record); // the password is right; the crypt hash stays until a login finds the hasher free
    const rehashed: UserRecord = { ...record, passwordHash: hash.value };
    this.store.transaction(() => {
      // Only if nobody changed the password meanwhile.
      if (this.store.getUser(record.name)?.passwordHash === record.passwordHash) this.store.updateUser(rehashed);
    });
    return ok(rehashed);
  }

  /**
   * Sets a password hash taken as it is from an ocpasswd file: crypt $1$, $5$ or $6$, or such a
   * hash behind "!" (a locked entry: kept, and it never verifies, as in ocserv).
   */
  adoptPasswordHash(name: string, hash: string, actor: Actor): Result<UserView> {
    if (!isCryptHash(hash.replace(/^!/, ""))) return err("invalid_input", `the password hash of ${name} is not crypt $1$, $5$ or $6$: set a password with 'gw user passwd'`);
    return this.store.transaction((): Result<UserView> => {
      const record = this.store.getUser(name);
      if (!record) return notFound(name);
      this.store.updateUser({ ...record, passwordHash: hash });
      this.context?.audit.record(actor, "user.update", name, toView(record), { ...toView(record), hasPassword: true, password: hash.startsWith("!") ? "(imported, locked)" : "(imported)" });
      return ok(toView({ ...record, passwordHash: hash }));
    });
  }

  recordFailure(name: string): void {
    this.store.recordLoginFailure(name);
  }

  /** Kept until flushLoginStamps (the gateway's housekeeping, every second, and its stop; a read of users). */
  recordSuccess(name: string): void {
    this.loginStamps.set(name, this.now());
  }

  /**
   * Writes the login times gathered since the last call, in one transaction. When the store
   * refuses (disk full, locked), they are kept for the next call and the error is returned.
   */
  flushLoginStamps(): Result<void> {
    if (this.loginStamps.size === 0) return ok(undefined);
    try {
      this.store.transaction(() => {
        for (const [name, at] of this.loginStamps) this.store.recordLoginSuccess(name, at);
      });
    } catch (e) {
      return err("store_unavailable", `cannot write ${this.loginStamps.size} login time(s), kept for the next try: ${(e as Error).message}`);
    }
    this.loginStamps.clear();
    return ok(undefined);
  }

  private readonly dummy = new DummyHash(() => this.hasher, () => this.hashCost(), "gw-dummy-password-for-unknown-users");
  private dummyHash(): Promise<Result<string>> {
    return this.dummy.get();
  }

  /**
   * Hashes first (slow, async), then checks and writes in one transaction with the audit
   * record, so a concurrent writer never sees half a change.
   */
  private async write(name: string, doc: UserDocument, actor: Actor, mode: "create" | "update" | "upsert"): Promise<Result<{ user: UserView; created: boolean }>> {
    const groups = [...new Set(doc.groups)];
    const overrides = overridesOfDocument(doc);
    const tested = this.context?.policy?.testUser(name, overrides);
    if (tested && !tested.ok) return tested;
    const hashed = doc.password === undefined ? undefined : await this.hasher.hash(doc.password, this.hashCost());
    if (hashed && !hashed.ok) return hashed;
    const passwordHash = hashed?.value;
    const outcome = this.store.transaction((): Result<{ user: UserView; created: boolean; before: UserView | null; changed: boolean }> => {
      const missing = groups.filter((g) => !this.store.getGroup(g));
      if (missing.length > 0) {
        return err("group_not_found", `unknown group ${missing.join(", ")}: create it first with 'gw group add ${missing[0]}'`, missing.map((g) => ({ path: `groups.${doc.groups.indexOf(g)}`, message: `no group named ${g}` })));
      }
      const existing = this.store.getUser(name);
      if (mode === "create" && existing) return err("user_exists", `user ${name} already exists`);
      if (mode === "update" && !existing) return notFound(name);
      const record: UserRecord = {
        name,
        passwordHash: passwordHash ?? existing?.passwordHash ?? NO_PASSWORD,
        disabled: doc.disabled,
        groups,
        failedLogins: existing?.failedLogins ?? 0,
        lastLoginAt: existing?.lastLoginAt ?? null,
        createdAt: existing?.createdAt ?? this.now(),
        overridesJson: JSON.stringify(overrides),
        otpEnrolledAt: existing?.otpEnrolledAt ?? null,
      };
      const before = existing ? toView(existing) : null;
      const after = toView(record);
      const changed = passwordHash !== undefined || JSON.stringify(before) !== JSON.stringify(after);
      if (existing) this.store.updateUser(record);
      else this.store.insertUser(record);
      if (changed) this.context?.audit.record(actor, existing ? "user.update" : "user.create", name, before, passwordHash !== undefined ? { ...after, password: "(changed)" } : after);
      return ok({ user: after, created: !existing, before, changed });
    });
    if (!outcome.ok) return outcome;
    const { user, created, changed, before } = outcome.value;
    if (changed) this.context?.events.emit({ type: created ? "user.created" : "user.updated", name, actor });
    if (user.disabled) this.endSessionsOf(name);
    else if (before && JSON.stringify(policyPartOf(before)) !== JSON.stringify(policyPartOf(user))) this.context?.onUserPolicyChanged?.(name);
    return ok({ user: this.withWarnings(user), created });
  }

  private withWarnings(view: UserView): UserView {
    const warnings = this.context?.policy?.userWarnings(view.groups, overridesOfView(view)) ?? [];
    return warnings.length ? { ...view, warnings } : view;
  }

  private endSessionsOf(name: string): void {
    const sessions = this.context?.sessions;
    if (!sessions) return;
    for (const session of sessions.list()) if (session.user === name) sessions.end(session, "admin");
  }
}

function notFound<T>(name: string): Result<T> {
  return err("user_not_found", `no user named ${name}: 'gw user list' shows the users`);
}

export function parseOverrides(json: string): UserOverrides {
  try {
    const parsed = userOverridesSchema.safeParse(JSON.parse(json));
    if (parsed.success) return parsed.data;
  } catch {}
  return { routes: [] };
}

/** What a live session's policy depends on besides the group: a change here is re-applied to live sessions. */
function policyPartOf(view: UserView) {
  return { groups: view.groups, routes: view.routes, rules: view.rules, rateUp: view.rateUp, rateDown: view.rateDown };
}

function overridesOfView(view: UserView): UserOverrides {
  return {
    routes: view.routes,
    ...(view.staticAddress ? { staticAddress: view.staticAddress } : {}),
    ...(view.rules ? { rules: view.rules } : {}),
    ...(view.rateUp !== undefined ? { rateUp: view.rateUp } : {}),
    ...(view.rateDown !== undefined ? { rateDown: view.rateDown } : {}),
    ...(view.quota ? { quota: view.quota } : {}),
    ...(view.expiresAt ? { expiresAt: view.expiresAt } : {}),
    ...pickOverrides(view),
  };
}

/** What a user document stores as overrides; an empty rule list is no rule list (the same for a session). */
function overridesOfDocument(doc: UserDocument): UserOverrides {
  return {
    routes: doc.routes,
    ...(doc.staticAddress ? { staticAddress: doc.staticAddress } : {}),
    ...(doc.rules?.length ? { rules: doc.rules } : {}),
    ...(doc.rateUp !== undefined ? { rateUp: doc.rateUp } : {}),
    ...(doc.rateDown !== undefined ? { rateDown: doc.rateDown } : {}),
    ...(doc.quota ? { quota: doc.quota } : {}),
    ...(doc.expiresAt ? { expiresAt: doc.expiresAt } : {}),
    ...pickOverrides(doc),
  };
}

function toView(record: UserRecord): UserView {
  const overrides = parseOverrides(record.overridesJson);
  return {
    name: record.name,
    groups: record.groups,
    disabled: record.disabled,
    hasPassword: record.passwordHash !== NO_PASSWORD,
    ...(overrides.staticAddress ? { staticAddress: overrides.staticAddress } : {}),
    routes: overrides.routes,
    ...(overrides.rules?.length ? { rules: overrides.rules } : {}),
    ...(overrides.rateUp !== undefined ? { rateUp: overrides.rateUp } : {}),
    ...(overrides.rateDown !== undefined ? { rateDown: overrides.rateDown } : {}),
    ...pickOverrides(overrides),
    failedLogins: record.failedLogins,
    lastLoginAt: record.lastLoginAt,
    createdAt: record.createdAt,
    otp: { enrolled: record.otpEnrolledAt != null, since: record.otpEnrolledAt ?? null },
    ...(overrides.quota ? { quota: overrides.quota } : {}),
    ...(overrides.expiresAt ? { expiresAt: overrides.expiresAt } : {}),
  };
}

/** The policy override fields that are set, copied from a document or the stored overrides. */
function pickOverrides(source: Partial<Record<(typeof POLICY_OVERRIDE_KEYS)[number], unknown>>): Partial<UserOverrides> {
  const picked: Record<string, unknown> = {};
  for (const key of POLICY_OVERRIDE_KEYS) if (source[key] !== undefined) picked[key] = source[key];
  return picked as Partial<UserOverrides>;
}

export function staticAddressOf(overrides: UserOverrides): number | undefined {
  return overrides.staticAddress ? parseIpv4(overrides.staticAddress) : undefined;
}
