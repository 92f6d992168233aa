import { randomBytes } from "node:crypto";
import { z } from "zod";
import { err, ok, type Result } from "../errors.ts";
import type { ApiTokenRecord } from "../store/records.ts";
import type { Store } from "../store/store.ts";
import { hashApiSecret } from "./api-tokens.ts";
import { LOCAL_CLI_ACTOR, type Actor, type AuditLog } from "./audit.ts";
import type { EventBus } from "./events.ts";

export const tokenScopeSchema = z.enum(["read", "admin"]);
export type TokenScope = z.infer<typeof tokenScopeSchema>;

export const tokenNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "a token name is 1-64 characters: letters, digits, '.', '_', '-'");

export const newTokenSchema = z
  .object({
    name: tokenNameSchema,
    scope: tokenScopeSchema,
    /** Milliseconds since the epoch; absent or null = never expires. */
    expiresAt: z.number().int().positive().nullable().optional(),
  })
  .strict();
export type NewToken = z.infer<typeof newTokenSchema>;

export const tokenViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  scope: tokenScopeSchema,
  createdAt: z.number().int(),
  expiresAt: z.number().int().nullable(),
  expired: z.boolean(),
});
export type TokenView = z.infer<typeof tokenViewSchema>;

export const createdTokenSchema = tokenViewSchema.extend({ secret: z.string().describe("shown once; only its SHA-256 is stored") });
export type CreatedToken = z.infer<typeof createdTokenSchema>;

/** Who an API request acts as. */
export interface Principal {
  name: string;
  scope: TokenScope;
}

/** API tokens: `gw_` + 32 random bytes; only the SHA-256 is stored, the secret is shown once. */
export class TokenService {
  constructor(
    private readonly store: Store,
    private readonly audit: AuditLog,
    private readonly events: EventBus,
    private readonly now: () => number,
  ) {}

  /** A request its caller validated (newTokenSchema: the API's body check). */
  create(input: NewToken, actor: Actor): Result<CreatedToken> {
    const { name, scope } = input;
    if (name === LOCAL_CLI_ACTOR) return err("invalid_input", `the token name ${name} is the server's own (api.json): pick another`, [{ path: "name", message: "reserved" }]);
    const expiresAt = input.expiresAt ?? null;
    if (expiresAt !== null && expiresAt <= this.now()) return err("invalid_input", "the expiry is in the past", [{ path: "expiresAt", message: "must be in the future" }]);
    const secret = `gw_${randomBytes(32).toString("base64url")}`;
    const record: ApiTokenRecord = { id: randomBytes(8).toString("hex"), name, secretHash: hashApiSecret(secret), scope, createdAt: this.now(), expiresAt };
    const created = this.store.transaction(() => {
      if (this.findByName(name)) return false;
      this.store.insertApiToken(record);
      this.audit.record(actor, "token.create", name, null, this.view(record));
      return true;
    });
    if (!created) return err("token_exists", `a token named ${name} already exists: revoke it first or pick another name`);
    this.events.emit({ type: "token.created", name, actor });
    return ok({ ...this.view(record), secret });
  }

  list(): TokenView[] {
    return this.store.listApiTokens().map((r) => this.view(r));
  }

  get(nameOrId: string): Result<TokenView> {
    const record = this.findByName(nameOrId) ?? this.store.listApiTokens().find((t) => t.id === nameOrId);
    return record ? ok(this.view(record)) : err("token_not_found", `no API token named ${nameOrId}: 'gw token list' shows them`);
  }

  /** Revokes by name or id. */
  revoke(nameOrId: string, actor: Actor): Result<void> {
    const found = this.get(nameOrId);
    if (!found.ok) return found;
    this.store.transaction(() => {
      this.store.deleteApiToken(found.value.id);
      this.audit.record(actor, "token.revoke", found.value.name, found.value, null);
    });
    this.events.emit({ type: "token.revoked", name: found.value.name, actor });
    return ok(undefined);
  }

  /** The principal a bearer secret stands for; undefined for unknown, revoked or expired ones. */
  authenticate(secret: string): Principal | undefined {
    if (!secret || secret.length > 200) return undefined;
    const record = this.store.findApiTokenByHash(hashApiSecret(secret));
    if (!record) return undefined;
    if (record.expiresAt !== null && record.expiresAt <= this.now()) return undefined;
    return { name: record.name, scope: record.scope };
  }

  /** Replaces the token of this name (no audit: used by the server for its own local-cli token). */
  issueInternal(name: string, scope: TokenScope): string {
    const secret = `gw_${randomBytes(32).toString("base64url")}`;
    this.store.transaction(() => {
      const old = this.findByName(name);
      if (old) this.store.deleteApiToken(old.id);
      this.store.insertApiToken({ id: randomBytes(8).toString("hex"), name, secretHash: hashApiSecret(secret), scope, createdAt: this.now(), expiresAt: null });
    });
    return secret;
  }

  removeInternal(name: string): void {
    const old = this.findByName(name);
    if (old) this.store.deleteApiToken(old.id);
  }

  private findByName(name: string): ApiTokenRecord | undefined {
    return this.store.listApiTokens().find((t) => t.name === name);
  }

  private view(r: ApiTokenRecord): TokenView {
    return { id: r.id, name: r.name, scope: r.scope, createdAt: r.createdAt, expiresAt: r.expiresAt, expired: r.expiresAt !== null && r.expiresAt <= this.now() };
  }
}
