import type { UserView } from "../control/users.ts";
import { quotaOfText, quotaText, quotaTextOfBody } from "./quota-form.ts";
import { fieldErrors, numberOrText, rowOfRule, rulesOfBody, rulesOfRows, splitList, type RuleRow } from "./group-form.ts";

/**
 * The user page's form: groups and the overrides a user may hold over their group's policy (the
 * fields of PATCH /api/v1/users/{name}), as text, and their translation to a merge patch. As with
 * the group form, nothing is validated here: UserService.patch validates with the API's schema.
 */

/** Lists (one entry per line, or comma-separated). Blank routes: none of the user's own; the others: the group's. */
export const USER_LIST_FIELDS = ["groups", "routes", "excludeRoutes", "dns", "splitDns"] as const;
export const USER_NUMBER_FIELDS = ["mtu", "dpdSeconds", "keepaliveSeconds", "idleTimeoutSeconds", "sessionTimeoutSeconds", "maxSessionsPerUser"] as const;
/** Blank removes the field. rateUp/rateDown take "20mbit" or bits/s; expiresAt a date or an ISO time. */
export const USER_TEXT_FIELDS = ["staticAddress", "expiresAt", "rateUp", "rateDown"] as const;

export interface UserFormValues {
  text: Record<string, string>;
  /** The user's own rules (after the group's); none: the group's alone. */
  rules: RuleRow[];
}

export function valuesOfUser(user: UserView): UserFormValues {
  const text: Record<string, string> = {};
  for (const f of USER_LIST_FIELDS) text[f] = (user[f] ?? []).join("\n");
  for (const f of [...USER_NUMBER_FIELDS, ...USER_TEXT_FIELDS]) text[f] = user[f] === undefined ? "" : String(user[f]);
  Object.assign(text, quotaText(user.quota));
  return { text, rules: (user.rules ?? []).map(rowOfRule) };
}

export function valuesOfUserForm(body: Record<string, unknown>): UserFormValues {
  const text: Record<string, string> = {};
  for (const f of [...USER_LIST_FIELDS, ...USER_NUMBER_FIELDS, ...USER_TEXT_FIELDS]) text[f] = typeof body[f] === "string" ? (body[f] as string) : "";
  Object.assign(text, quotaTextOfBody(body));
  return { text, rules: rulesOfBody(body) };
}

/** The merge patch the form stands for (every field it shows is set, or removed when blank) and which row each rule came from. */
export function patchOfUserValues(v: UserFormValues): { patch: Record<string, unknown>; ruleRows: number[] } {
  const patch: Record<string, unknown> = {};
  for (const f of USER_LIST_FIELDS) {
    const list = splitList(v.text[f] ?? "");
    patch[f] = list.length > 0 || f === "groups" || f === "routes" ? list : null;
  }
  for (const f of USER_NUMBER_FIELDS) patch[f] = numberOrText(v.text[f] ?? "");
  for (const f of USER_TEXT_FIELDS) {
    const t = (v.text[f] ?? "").trim();
    patch[f] = t === "" ? null : (f === "rateUp" || f === "rateDown") && /^\d+$/.test(t) ? Number(t) : t;
  }
  const { rules, ruleRows } = rulesOfRows(v.rules);
  patch.rules = rules.length > 0 ? rules : null;
  // The user's own quota; blank: none of their own (their groups' applies).
  patch.quota = quotaOfText(v.text);
  return { patch, ruleRows };
}

/** Problems by form field ("mtu", "dns", "rules.2.to"); "" for those without one. */
export const userFieldErrors = (details: Parameters<typeof fieldErrors>[0], ruleRows: readonly number[]) =>
  fieldErrors(details, { ruleRows }, { lists: USER_LIST_FIELDS, fields: [...USER_LIST_FIELDS, ...USER_NUMBER_FIELDS, ...USER_TEXT_FIELDS, "rules", "quota"] });
