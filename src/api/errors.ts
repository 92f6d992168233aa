import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "zod";
import type { GwError } from "../errors.ts";

/** The one error body of the API: `{ "error": { "code", "message", "details" } }`. */
export const errorBodySchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    /** For validation errors: every problem with its path (`a.b.0`); otherwise absent or code-specific. */
    details: z.unknown().optional(),
  }),
});

interface ErrorCodeInfo {
  status: ContentfulStatusCode;
  description: string;
  /** A passing refusal: the answer carries `Retry-After` with this many seconds. */
  retryAfterSeconds?: number;
}

/** Every error code the API returns, with its HTTP status (documented in openapi.json). */
export const ERROR_CODES = {
  unauthorized: { status: 401, description: "no Authorization: Bearer header, or an unknown, revoked or expired token" },
  forbidden: { status: 403, description: "the token's scope does not allow this (read tokens cannot change anything)" },
  not_found: { status: 404, description: "no such route" },
  invalid_json: { status: 400, description: "the body is not valid JSON" },
  invalid_input: { status: 400, description: "the body or query failed validation: details lists every problem with its path" },
  unsupported_media_type: { status: 415, description: "a request body must be application/json" },
  body_too_large: { status: 413, description: "the body is larger than the limit (64 KiB)" },
  user_not_found: { status: 404, description: "no user of that name" },
  user_exists: { status: 409, description: "a user of that name exists (POST); use PUT to replace" },
  group_not_found: { status: 404, description: "no group of that name (also: a user names an unknown group)" },
  group_exists: { status: 409, description: "a group of that name exists (POST); use PUT to replace" },
  group_in_use: { status: 409, description: "the group still has members" },
  token_not_found: { status: 404, description: "no API token of that name or id" },
  token_exists: { status: 409, description: "an API token of that name exists" },
  otp_already_enrolled: { status: 409, description: "the user is enrolled for one-time codes already: DELETE /users/{name}/otp first" },
  otp_not_enrolled: { status: 404, description: "the user is not enrolled for one-time codes" },
  otp_key_unavailable: { status: 500, description: "the data directory's secret key (otp.key) cannot be read or created: see the message" },
  rule_not_found: { status: 404, description: "no rule with that index in the group's or user's rules (they are numbered from 1)" },
  policy_test_failed: { status: 422, description: "the change would make a policy test (a group's `tests`) fail: nothing was changed; details name each failing test" },
  connection_not_found: { status: 404, description: "no live session with that id" },
  not_running: { status: 409, description: "needs the running server (the CLI works on the data directory only)" },
  admin_exists: { status: 409, description: "a web UI account of that name exists" },
  admin_not_found: { status: 404, description: "no web UI account of that name" },
  last_admin: { status: 409, description: "the last account with role admin cannot lose that role or be deleted" },
  not_draining: { status: 404, description: "the gateway is not draining" },
  reload_failed: { status: 409, description: "a new certificate, key, CA, CRL or settings document could not be loaded: nothing changed; the message says which and why" },
  store_corrupt: { status: 500, description: "a stored record is unreadable" },
  internal: { status: 500, description: "unexpected failure: see the gateway log" },
  server_busy: { status: 503, description: "the password hasher's queue is full (a login storm): nothing was changed; try again after Retry-After seconds", retryAfterSeconds: 2 },
  worker_failed: { status: 503, description: "a password hashing worker thread failed and was replaced: nothing was changed; try again after Retry-After seconds", retryAfterSeconds: 1 },
  worker_pool_closed: { status: 503, description: "the gateway is stopping: nothing was changed; try again once it runs (Retry-After)", retryAfterSeconds: 5 },
  password_hash_failed: { status: 500, description: "argon2id refused the configured cost (passwordHashMemoryKiB, passwordHashPasses): see the message" },
} as const satisfies Record<string, ErrorCodeInfo>;

/** A code a route may declare in its `errors`: a misspelt one does not compile. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** What a route that hashes a password (argon2id, on the hashing threads) may answer besides its own errors. */
export const PASSWORD_HASH_ERRORS = ["server_busy", "worker_failed", "worker_pool_closed", "password_hash_failed"] as const satisfies readonly ErrorCode[];

export const errorCodeInfo = (code: string): ErrorCodeInfo | undefined => (ERROR_CODES as Record<string, ErrorCodeInfo>)[code];

export function statusOf(code: string): ContentfulStatusCode {
  return errorCodeInfo(code)?.status ?? (code.endsWith("_not_found") ? 404 : 400);
}

export function problem(c: Context, code: string, message: string, details?: unknown): Response {
  const retryAfter = errorCodeInfo(code)?.retryAfterSeconds;
  if (retryAfter !== undefined) c.header("Retry-After", String(retryAfter));
  return c.json({ error: { code, message, ...(details === undefined ? {} : { details }) } }, statusOf(code));
}

export function fromGwError(c: Context, e: GwError): Response {
  return problem(c, e.code, e.message, e.details);
}
