import { Hono } from "hono";
import { z } from "zod";
import { otpEnrolmentSchema, otpEnrolRequestSchema } from "../control/otp.ts";
import { newUserSchema, userDocumentSchema, userViewSchema } from "../control/users.ts";
import type { ApiEnv } from "./api-env.ts";
import { fromGwError } from "./errors.ts";
import type { RouteDoc } from "./route-doc.ts";
import { jsonBody } from "./validate.ts";

/** PATCH body: any subset of the document; null removes staticAddress. */
export const userPatchSchema = z
  .object({
    groups: z.array(z.string()).optional(),
    disabled: z.boolean().optional(),
    password: z.string().optional(),
    staticAddress: z.string().nullable().optional(),
    routes: z.array(z.string()).optional(),
  })
  .strict();

export const userDocs: RouteDoc[] = [
  { method: "get", path: "/users", summary: "All users", scope: "read", responses: [{ status: 200, description: "users", schema: z.array(userViewSchema) }] },
  {
    method: "post",
    path: "/users",
    summary: "Create a user (password write-only, stored as argon2id)",
    scope: "admin",
    body: newUserSchema,
    responses: [{ status: 201, description: "created", schema: userViewSchema }],
    errors: ["user_exists", "group_not_found"],
  },
  { method: "get", path: "/users/{name}", summary: "One user", scope: "read", responses: [{ status: 200, description: "the user", schema: userViewSchema }], errors: ["user_not_found"] },
  {
    method: "put",
    path: "/users/{name}",
    summary: "Create or replace a user (idempotent). Without password the current one is kept. disabled=true ends the user's sessions",
    scope: "admin",
    body: userDocumentSchema,
    responses: [
      { status: 200, description: "replaced", schema: userViewSchema },
      { status: 201, description: "created", schema: userViewSchema },
    ],
    errors: ["group_not_found"],
  },
  {
    method: "patch",
    path: "/users/{name}",
    summary: "Change some fields (JSON merge patch; null removes staticAddress). disabled=true ends the user's sessions",
    scope: "admin",
    body: userPatchSchema,
    responses: [{ status: 200, description: "changed", schema: userViewSchema }],
    errors: ["user_not_found", "group_not_found"],
  },
  {
    method: "delete",
    path: "/users/{name}",
    summary: "Delete a user and end their sessions (204; 404 once it is gone)",
    scope: "admin",
    responses: [{ status: 204, description: "deleted" }],
    errors: ["user_not_found"],
  },
  {
    method: "post",
    path: "/users/{name}/otp",
    summary: "Enrol the user for one-time codes (TOTP, 30 s, 6 digits, SHA-1): the only time the secret is shown. Body: {}",
    scope: "admin",
    body: otpEnrolRequestSchema,
    responses: [{ status: 201, description: "enrolled: base32 secret, otpauth:// URI and its QR code as SVG", schema: otpEnrolmentSchema }],
    errors: ["user_not_found", "otp_already_enrolled", "otp_key_unavailable"],
  },
  {
    method: "delete",
    path: "/users/{name}/otp",
    summary: "Remove the user's OTP enrolment (204); groups that require otp refuse the user until enrolled again",
    scope: "admin",
    responses: [{ status: 204, description: "reset" }],
    errors: ["user_not_found", "otp_not_enrolled"],
  },
];

export const userRoutes = new Hono<ApiEnv>()
  .get("/users", (c) => c.json(c.var.control.users.list()))
  .post("/users", jsonBody(newUserSchema), async (c) => {
    const r = await c.var.control.users.create(c.req.valid("json"), c.var.principal.name);
    return r.ok ? c.json(r.value, 201) : fromGwError(c, r.error);
  })
  .get("/users/:name", (c) => {
    const r = c.var.control.users.get(c.req.param("name"));
    return r.ok ? c.json(r.value) : fromGwError(c, r.error);
  })
  .put("/users/:name", jsonBody(userDocumentSchema), async (c) => {
    const r = await c.var.control.users.replace(c.req.param("name"), c.req.valid("json"), c.var.principal.name);
    return r.ok ? c.json(r.value.user, r.value.created ? 201 : 200) : fromGwError(c, r.error);
  })
  .patch("/users/:name", jsonBody(userPatchSchema), async (c) => {
    const r = await c.var.control.users.patch(c.req.param("name"), c.req.valid("json"), c.var.principal.name);
    return r.ok ? c.json(r.value) : fromGwError(c, r.error);
  })
  .delete("/users/:name", (c) => {
    const r = c.var.control.users.remove(c.req.param("name"), c.var.principal.name);
    return r.ok ? c.body(null, 204) : fromGwError(c, r.error);
  })
  .post("/users/:name/otp", jsonBody(otpEnrolRequestSchema), (c) => {
    const r = c.var.control.otp.enroll(c.req.param("name"), c.var.principal.name);
    return r.ok ? c.json(r.value, 201) : fromGwError(c, r.error);
  })
  .delete("/users/:name/otp", (c) => {
    const r = c.var.control.otp.reset(c.req.param("name"), c.var.principal.name);
    return r.ok ? c.body(null, 204) : fromGwError(c, r.error);
  });
