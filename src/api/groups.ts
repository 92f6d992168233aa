import { z } from "zod";
import { groupPolicySchema } from "../control/group-policy.ts";
import { groupViewSchema } from "../control/groups.ts";
import { createdOrReplaced } from "./reply.ts";
import { route } from "./route.ts";
import { readOnlyUnchanged, viewBody, viewOnlyKeys } from "./view-body.ts";

export const newGroupSchema = z.object({ name: z.string(), policy: groupPolicySchema.default({ routes: [], excludeRoutes: [], dns: [] }) }).strict();

/** PATCH body: any subset of the policy; null removes an optional field. */
export const groupPatchSchema = z.record(z.string(), z.unknown());

/** PUT takes the policy, or the view GET returned ({ name, policy, members, createdAt }; read-only fields unchanged). */
const groupPutBody = viewBody(groupPolicySchema, viewOnlyKeys(groupViewSchema, z.object({ policy: groupPolicySchema })), "policy");

const live =
  "Changes apply to sessions that log in afterwards; live sessions keep the policy they got at login (the client received it in the CONNECT answer and the protocol cannot push a new one).";

export const groupRoutes = [
  route({
    method: "get",
    path: "/groups",
    summary: "All groups (tunnel policies)",
    scope: "read",
    responses: [{ status: 200, description: "groups", schema: z.array(groupViewSchema) }],
    handler: ({ control }) => control.groups.list(),
  }),
  route({
    method: "post",
    path: "/groups",
    summary: `Create a group. ${live}`,
    scope: "admin",
    body: newGroupSchema,
    responses: [{ status: 201, description: "created", schema: groupViewSchema }],
    errors: ["group_exists", "policy_test_failed"],
    handler: ({ control, body, principal }) => control.groups.create(body.name, body.policy, principal.name),
  }),
  route({
    method: "get",
    path: "/groups/{name}",
    summary: "One group",
    scope: "read",
    responses: [{ status: 200, description: "the group", schema: groupViewSchema }],
    errors: ["group_not_found"],
    handler: ({ control, params }) => control.groups.get(params.name),
  }),
  route({
    method: "put",
    path: "/groups/{name}",
    summary: `Create or replace a group's policy (idempotent); the view GET returned is accepted too (read-only fields ignored when unchanged, refused when changed). ${live}`,
    scope: "admin",
    body: groupPutBody,
    documentedBody: groupPolicySchema,
    responses: [
      { status: 200, description: "replaced", schema: groupViewSchema },
      { status: 201, description: "created", schema: groupViewSchema },
    ],
    errors: ["policy_test_failed"],
    handler: ({ control, params, body, principal }) => {
      const current = control.groups.get(params.name);
      const unchanged = readOnlyUnchanged(body.readOnly, params.name, current.ok ? current.value : undefined);
      if (!unchanged.ok) return unchanged;
      const r = control.groups.replace(params.name, body.document, principal.name);
      return r.ok ? createdOrReplaced(r.value.group, r.value.created) : r;
    },
  }),
  route({
    method: "patch",
    path: "/groups/{name}",
    summary: `Change some policy fields (JSON merge patch; null removes). ${live}`,
    scope: "admin",
    body: groupPatchSchema,
    responses: [{ status: 200, description: "changed", schema: groupViewSchema }],
    errors: ["group_not_found", "policy_test_failed"],
    handler: ({ control, params, body, principal }) => control.groups.patch(params.name, body, principal.name),
  }),
  route({
    method: "delete",
    path: "/groups/{name}",
    summary: "Delete a group without members (204; 404 once it is gone)",
    scope: "admin",
    responses: [{ status: 204, description: "deleted" }],
    errors: ["group_not_found", "group_in_use"],
    handler: ({ control, params, principal }) => control.groups.remove(params.name, principal.name),
  }),
];
