import { z } from "zod";
import { adminRoleSchema, adminViewSchema, newAdminSchema } from "../control/admins.ts";
import { PASSWORD_HASH_ERRORS } from "./errors.ts";
import { route } from "./route.ts";

const otpEnrolmentSchema = z.object({ admin: z.string(), secret: z.string(), uri: z.string(), svg: z.string(), enrolledAt: z.number().int() });

/** Management-plane accounts: who may sign in to the web UI, with which role. */
export const adminRoutes = [
  route({
    method: "get",
    path: "/admins",
    summary: "Web UI accounts (never their passwords)",
    scope: "read",
    responses: [{ status: 200, description: "admins", schema: z.array(adminViewSchema) }],
    handler: ({ control }) => control.admins.list(),
  }),
  route({
    method: "post",
    path: "/admins",
    summary: "Create a web UI account: role admin (may change everything) or read (sees everything, changes nothing); the password is stored as argon2id",
    scope: "admin",
    body: newAdminSchema,
    responses: [{ status: 201, description: "created", schema: adminViewSchema }],
    errors: ["admin_exists", ...PASSWORD_HASH_ERRORS],
    handler: ({ control, body, principal }) => control.admins.add(body, principal.name),
  }),
  route({
    method: "get",
    path: "/admins/{name}",
    summary: "One web UI account",
    scope: "read",
    responses: [{ status: 200, description: "the admin", schema: adminViewSchema }],
    errors: ["admin_not_found"],
    handler: ({ control, params }) => control.admins.get(params.name),
  }),
  route({
    method: "patch",
    path: "/admins/{name}",
    summary: "Change an account's role (the last admin with role admin keeps it)",
    scope: "admin",
    body: z.object({ role: adminRoleSchema }).strict(),
    responses: [{ status: 200, description: "changed", schema: adminViewSchema }],
    errors: ["admin_not_found", "last_admin"],
    handler: ({ control, params, body, principal }) => control.admins.setRole(params.name, body.role, principal.name),
  }),
  route({
    method: "put",
    path: "/admins/{name}/password",
    summary: "Set an account's password",
    scope: "admin",
    body: z.object({ password: z.string() }).strict(),
    responses: [{ status: 200, description: "changed", schema: adminViewSchema }],
    errors: ["admin_not_found", ...PASSWORD_HASH_ERRORS],
    handler: ({ control, params, body, principal }) => control.admins.setPassword(params.name, body.password, principal.name),
  }),
  route({
    method: "delete",
    path: "/admins/{name}",
    summary: "Delete an account (204; 404 once it is gone; the last admin with role admin stays)",
    scope: "admin",
    responses: [{ status: 204, description: "deleted" }],
    errors: ["admin_not_found", "last_admin"],
    handler: ({ control, params, principal }) => control.admins.remove(params.name, principal.name),
  }),
  route({
    method: "post",
    path: "/admins/{name}/otp",
    summary: "Enrol the account for one-time codes at sign-in: the only time the secret is shown. Body: {}",
    scope: "admin",
    body: z.object({}).strict(),
    responses: [{ status: 201, description: "enrolled: secret, otpauth:// URI and QR code as SVG", schema: otpEnrolmentSchema }],
    errors: ["admin_not_found", "otp_already_enrolled", "otp_key_unavailable"],
    handler: ({ control, params, principal }) => control.admins.enrollOtp(params.name, principal.name),
  }),
  route({
    method: "delete",
    path: "/admins/{name}/otp",
    summary: "Remove the account's one-time-code enrolment",
    scope: "admin",
    responses: [{ status: 200, description: "reset", schema: adminViewSchema }],
    errors: ["admin_not_found", "otp_not_enrolled"],
    handler: ({ control, params, principal }) => control.admins.resetOtp(params.name, principal.name),
  }),
];
