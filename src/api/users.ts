import { z } from "zod";
import { otpEnrolmentSchema, otpEnrolRequestSchema } from "../control/otp.ts";
import { newUserSchema, userDocumentSchema, userViewSchema } from "../control/users.ts";
import { createdOrReplaced } from "./reply.ts";
import { readOnlyUnchanged, viewBody, viewOnlyKeys } from "./view-body.ts";
import { PASSWORD_HASH_ERRORS } from "./errors.ts";
import { route } from "./route.ts";

/** PATCH body: any subset of the document; null removes staticAddress or a policy override (the group's value applies again). */
export const userPatchSchema = z
  .object({
    groups: z.array(z.string()).optional(),
    disabled: z.boolean().optional(),
    password: z.string().optional(),
    staticAddress: z.string().nullable().optional(),
    routes: z.array(z.string()).optional(),
    /** null removes the user's own quota (the groups' applies again). */
    quota: z.unknown().optional(),
    /** null removes the expiry. */
    expiresAt: z.string().nullable().optional(),
    /** The user's own rules, all of them (validated with the document; null or [] removes them). */
    rules: z.array(z.unknown()).nullable().optional(),
    rateUp: z.union([z.number(), z.string()]).nullable().optional(),
    rateDown: z.union([z.number(), z.string()]).nullable().optional(),
    excludeRoutes: z.array(z.string()).nullable().optional(),
    dns: z.array(z.string()).nullable().optional(),
    splitDns: z.array(z.string()).nullable().optional(),
    dpdSeconds: z.number().nullable().optional(),
    keepaliveSeconds: z.number().nullable().optional(),
    mtu: z.number().nullable().optional(),
    idleTimeoutSeconds: z.number().nullable().optional(),
    sessionTimeoutSeconds: z.number().nullable().optional(),
    maxSessionsPerUser: z.number().nullable().optional(),
  })
  .strict();

/** PUT /users/{name}/password-hash: a crypt(3) hash taken as it is. */
export const passwordHashSchema = z.object({ hash: z.string().min(1).max(512) }).strict();

/** PUT takes the document, or the view GET returned (read-only fields unchanged). */
const userPutBody = viewBody(userDocumentSchema, viewOnlyKeys(userViewSchema, userDocumentSchema));

export const userRoutes = [
  route({
    method: "get",
    path: "/users",
    summary: "All users",
    scope: "read",
    responses: [{ status: 200, description: "users", schema: z.array(userViewSchema) }],
    handler: ({ control }) => control.users.list(),
  }),
  route({
    method: "post",
    path: "/users",
    summary: "Create a user (password write-only, stored as argon2id)",
    scope: "admin",
    body: newUserSchema,
    responses: [{ status: 201, description: "created", schema: userViewSchema }],
    errors: ["user_exists", "group_not_found", "policy_test_failed", ...PASSWORD_HASH_ERRORS],
    handler: ({ control, body, principal }) => control.users.create(body, principal.name),
  }),
  route({
    method: "get",
    path: "/users/{name}",
    summary: "One user (their own quota and expiry included; GET /users/{name}/usage says where they stand against the quota)",
    scope: "read",
    responses: [{ status: 200, description: "the user", schema: userViewSchema }],
    errors: ["user_not_found"],
    handler: ({ control, params }) => control.users.get(params.name),
  }),
  route({
    method: "put",
    path: "/users/{name}",
    summary: "Create or replace a user (idempotent). Without password the current one is kept. disabled=true ends the user's sessions. The view GET returned is accepted too: its read-only fields are ignored when unchanged and refused when changed",
    scope: "admin",
    body: userPutBody,
    documentedBody: userDocumentSchema,
    responses: [
      { status: 200, description: "replaced", schema: userViewSchema },
      { status: 201, description: "created", schema: userViewSchema },
    ],
    errors: ["group_not_found", "policy_test_failed", ...PASSWORD_HASH_ERRORS],
    handler: async ({ control, params, body, principal }) => {
      const current = control.users.get(params.name);
      const unchanged = readOnlyUnchanged(body.readOnly, params.name, current.ok ? current.value : undefined);
      if (!unchanged.ok) return unchanged;
      const r = await control.users.replace(params.name, body.document, principal.name);
      return r.ok ? createdOrReplaced(r.value.user, r.value.created) : r;
    },
  }),
  route({
    method: "patch",
    path: "/users/{name}",
    summary: "Change some fields (JSON merge patch; null removes staticAddress). disabled=true ends the user's sessions",
    scope: "admin",
    body: userPatchSchema,
    responses: [{ status: 200, description: "changed", schema: userViewSchema }],
    errors: ["user_not_found", "group_not_found", "policy_test_failed", ...PASSWORD_HASH_ERRORS],
    handler: ({ control, params, body, principal }) => control.users.patch(params.name, body, principal.name),
  }),
  route({
    method: "delete",
    path: "/users/{name}",
    summary: "Delete a user and end their sessions (204; 404 once it is gone)",
    scope: "admin",
    responses: [{ status: 204, description: "deleted" }],
    errors: ["user_not_found"],
    handler: ({ control, params, principal }) => control.users.remove(params.name, principal.name),
  }),
  route({
    method: "post",
    path: "/users/{name}/otp",
    summary: "Enrol the user for one-time codes (TOTP, 30 s, 6 digits, SHA-1): the only time the secret is shown. Body: {} for a new secret, or {secret} (base32) to keep an existing token",
    scope: "admin",
    body: otpEnrolRequestSchema,
    responses: [{ status: 201, description: "enrolled: base32 secret, otpauth:// URI and its QR code as SVG", schema: otpEnrolmentSchema }],
    errors: ["user_not_found", "otp_already_enrolled", "otp_key_unavailable"],
    handler: ({ control, params, body, principal }) => control.otp.enroll(params.name, principal.name, body.secret),
  }),
  route({
    method: "put",
    path: "/users/{name}/password-hash",
    summary: "Set the user's password hash as imported from an ocpasswd file (crypt $1$, $5$, $6$; '!' in front: locked). Verified at login and re-hashed to argon2id on the first success",
    scope: "admin",
    body: passwordHashSchema,
    responses: [{ status: 200, description: "stored", schema: userViewSchema }],
    errors: ["user_not_found"],
    handler: ({ control, params, body, principal }) => control.users.adoptPasswordHash(params.name, body.hash, principal.name),
  }),
  route({
    method: "delete",
    path: "/users/{name}/otp",
    summary: "Remove the user's OTP enrolment (204); groups that require otp refuse the user until enrolled again",
    scope: "admin",
    responses: [{ status: 204, description: "reset" }],
    errors: ["user_not_found", "otp_not_enrolled"],
    handler: ({ control, params, principal }) => control.otp.reset(params.name, principal.name),
  }),
];
