import { ruleSchema } from "../firewall/rule.ts";
import { ruleListSchema, traceAnswerSchema, traceQuerySchema } from "../control/policy-views.ts";
import { route } from "./route.ts";

const index = (text: string) => (/^[0-9]{1,6}$/.test(text) ? Number(text) : NaN);

const shadowNote = "The answer lists the rules numbered from 1 and warns of rules that can never decide anything (shadowed).";
const testNote = "Refused with policy_test_failed when a group's policy tests would fail.";

/** Access rules as sub-resources of groups and users, and the packet tracer. */
export const policyRoutes = [
  route({
    method: "get",
    path: "/groups/{name}/rules",
    summary: `A group's rules (a group without a rules field shows the implicit starter rule). ${shadowNote}`,
    scope: "read",
    responses: [{ status: 200, description: "the rules", schema: ruleListSchema }],
    errors: ["group_not_found"],
    handler: ({ control, params }) => control.rules.ofGroup(params.name),
  }),
  route({
    method: "post",
    path: "/groups/{name}/rules",
    summary: `Append a rule to a group's rules (the implicit starter rule is written out first). ${shadowNote} ${testNote}`,
    scope: "admin",
    body: ruleSchema,
    bodyName: "rule",
    responses: [{ status: 201, description: "added: the rules now", schema: ruleListSchema }],
    errors: ["group_not_found", "policy_test_failed"],
    handler: ({ control, params, body, principal }) => control.rules.addToGroup(params.name, body, principal.name),
  }),
  route({
    method: "delete",
    path: "/groups/{name}/rules/{index}",
    summary: `Delete a group's rule by its number (deleting the last leaves no rule: nothing allowed). ${shadowNote} ${testNote}`,
    scope: "admin",
    responses: [{ status: 200, description: "deleted: the rules now", schema: ruleListSchema }],
    errors: ["group_not_found", "rule_not_found", "policy_test_failed"],
    handler: ({ control, params, principal }) => control.rules.removeFromGroup(params.name, index(params.index), principal.name),
  }),
  route({
    method: "get",
    path: "/users/{name}/rules",
    summary: `A user's own rules (they apply after their group's). ${shadowNote}`,
    scope: "read",
    responses: [{ status: 200, description: "the rules", schema: ruleListSchema }],
    errors: ["user_not_found"],
    handler: ({ control, params }) => control.rules.ofUser(params.name),
  }),
  route({
    method: "post",
    path: "/users/{name}/rules",
    summary: `Append a rule to a user's own rules. ${shadowNote} ${testNote}`,
    scope: "admin",
    body: ruleSchema,
    bodyName: "rule",
    responses: [{ status: 201, description: "added: the rules now", schema: ruleListSchema }],
    errors: ["user_not_found", "policy_test_failed"],
    handler: ({ control, params, body, principal }) => control.rules.addToUser(params.name, body, principal.name),
  }),
  route({
    method: "delete",
    path: "/users/{name}/rules/{index}",
    summary: `Delete a user's rule by its number. ${shadowNote} ${testNote}`,
    scope: "admin",
    responses: [{ status: 200, description: "deleted: the rules now", schema: ruleListSchema }],
    errors: ["user_not_found", "rule_not_found", "policy_test_failed"],
    handler: ({ control, params, principal }) => control.rules.removeFromUser(params.name, index(params.index), principal.name),
  }),
  route({
    method: "get",
    path: "/policy/trace",
    summary:
      "Which rule decides a packet of a user's session and why (a rule of the group or the user, restrictToRoutes, client-to-client, or the default deny). proto defaults to any; port for tcp and udp; group defaults to the user's first",
    scope: "read",
    query: traceQuerySchema,
    responses: [{ status: 200, description: "the decision", schema: traceAnswerSchema }],
    errors: ["user_not_found", "group_not_found"],
    handler: ({ control, query }) => control.policy.trace(query),
  }),
];
