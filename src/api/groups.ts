import { Hono } from "hono";
import { z } from "zod";
import { groupPolicySchema } from "../control/group-policy.ts";
import { groupViewSchema } from "../control/groups.ts";
import type { ApiEnv } from "./api-env.ts";
import { fromGwError } from "./errors.ts";
import type { RouteDoc } from "./route-doc.ts";
import { jsonBody } from "./validate.ts";

export const newGroupSchema = z.object({ name: z.string(), policy: groupPolicySchema.default({ routes: [], excludeRoutes: [], dns: [] }) }).strict();

/** PATCH body: any subset of the policy; null removes an optional field. */
export const groupPatchSchema = z.record(z.string(), z.unknown());

const live =
  "Changes apply to sessions that log in afterwards; live sessions keep the policy they got at login (the client received it in the CONNECT answer and the protocol cannot push a new one).";

export const groupDocs: RouteDoc[] = [
  { method: "get", path: "/groups", summary: "All groups (tunnel policies)", scope: "read", responses: [{ status: 200, description: "groups", schema: z.array(groupViewSchema) }] },
  {
    method: "post",
    path: "/groups",
    summary: `Create a group. ${live}`,
    scope: "admin",
    body: newGroupSchema,
    responses: [{ status: 201, description: "created", schema: groupViewSchema }],
    errors: ["group_exists"],
  },
  { method: "get", path: "/groups/{name}", summary: "One group", scope: "read", responses: [{ status: 200, description: "the group", schema: groupViewSchema }], errors: ["group_not_found"] },
  {
    method: "put",
    path: "/groups/{name}",
    summary: `Create or replace a group's policy (idempotent). ${live}`,
    scope: "admin",
    body: groupPolicySchema,
    responses: [
      { status: 200, description: "replaced", schema: groupViewSchema },
      { status: 201, description: "created", schema: groupViewSchema },
    ],
  },
  {
    method: "patch",
    path: "/groups/{name}",
    summary: `Change some policy fields (JSON merge patch; null removes). ${live}`,
    scope: "admin",
    body: groupPatchSchema,
    responses: [{ status: 200, description: "changed", schema: groupViewSchema }],
    errors: ["group_not_found"],
  },
  {
    method: "delete",
    path: "/groups/{name}",
    summary: "Delete a group without members (204; 404 once it is gone)",
    scope: "admin",
    responses: [{ status: 204, description: "deleted" }],
    errors: ["group_not_found", "group_in_use"],
  },
];

export const groupRoutes = new Hono<ApiEnv>()
  .get("/groups", (c) => c.json(c.var.control.groups.list()))
  .post("/groups", jsonBody(newGroupSchema), (c) => {
    const body = c.req.valid("json");
    const r = c.var.control.groups.add(body.name, body.policy, c.var.principal.name);
    return r.ok ? c.json(r.value, 201) : fromGwError(c, r.error);
  })
  .get("/groups/:name", (c) => {
    const r = c.var.control.groups.get(c.req.param("name"));
    return r.ok ? c.json(r.value) : fromGwError(c, r.error);
  })
  .put("/groups/:name", jsonBody(groupPolicySchema), (c) => {
    const r = c.var.control.groups.replace(c.req.param("name"), c.req.valid("json"), c.var.principal.name);
    return r.ok ? c.json(r.value.group, r.value.created ? 201 : 200) : fromGwError(c, r.error);
  })
  .patch("/groups/:name", jsonBody(groupPatchSchema), (c) => {
    const r = c.var.control.groups.patch(c.req.param("name"), c.req.valid("json"), c.var.principal.name);
    return r.ok ? c.json(r.value) : fromGwError(c, r.error);
  })
  .delete("/groups/:name", (c) => {
    const r = c.var.control.groups.remove(c.req.param("name"), c.var.principal.name);
    return r.ok ? c.body(null, 204) : fromGwError(c, r.error);
  });
