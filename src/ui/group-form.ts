import type { GroupPolicy } from "../control/group-policy.ts";
import type { ProblemDetail } from "../control/zod-errors.ts";
import type { Rule } from "../firewall/rule.ts";
import { rowOfTest, TEST_FIELDS, testsOfBody, testsOfRows, type TestRow } from "./policy-tests-form.ts";
import { QUOTA_FIELDS, quotaInput, quotaOfText, quotaText, quotaTextOfBody } from "./quota-form.ts";

/**
 * The group form's fields as the browser sends them (text), and their translation to a merge
 * patch of the policy. Nothing is validated here: the patch goes to GroupService.patch, which
 * validates it with the API's schema; its problems come back with paths that fieldErrors()
 * puts next to the field that caused them.
 */

export const RULE_FIELDS = ["action", "direction", "to", "proto", "ports", "description"] as const;
export type RuleRow = Record<(typeof RULE_FIELDS)[number], string>;

/** Text inputs holding one number each (blank removes the field: the gateway's default applies). */
export const NUMBER_FIELDS = ["mtu", "dpdSeconds", "keepaliveSeconds", "mobileDpdSeconds", "idleTimeoutSeconds", "sessionTimeoutSeconds", "maxSessionsPerUser"] as const;
/** Textareas holding a list (one entry per line, or comma-separated). */
export const LIST_FIELDS = ["routes", "excludeRoutes", "dns", "splitDns"] as const;
/** Plain text fields (blank removes the field). rateUp/rateDown take "20mbit" or bits/s. */
export const TEXT_FIELDS = ["defaultDomain", "auth", "rateUp", "rateDown"] as const;

export interface GroupFormValues {
  text: Record<string, string>;
  /** "starter": no rules field (the starter rule applies); "explicit": the rows below, even none. */
  rulesMode: "starter" | "explicit";
  rules: RuleRow[];
  /** The policy's assertions (docs/policy.md "Policy tests"); none: the field is removed. */
  tests: TestRow[];
  restrictToRoutes: boolean;
  icmpProhibited: boolean;
}

const BLANK_RULE: RuleRow = { action: "allow", direction: "outbound", to: "", proto: "any", ports: "", description: "" };
export const blankRule = (): RuleRow => ({ ...BLANK_RULE });

/** The form showing a stored policy. */
export function valuesOfPolicy(policy: GroupPolicy): GroupFormValues {
  const text: Record<string, string> = {};
  for (const f of LIST_FIELDS) text[f] = (policy[f] ?? []).join("\n");
  for (const f of NUMBER_FIELDS) text[f] = policy[f] === undefined ? "" : String(policy[f]);
  for (const f of TEXT_FIELDS) text[f] = policy[f] === undefined ? "" : String(policy[f]);
  Object.assign(text, quotaText(policy.quota));
  return {
    text,
    rulesMode: policy.rules === undefined ? "starter" : "explicit",
    rules: (policy.rules ?? []).map(rowOfRule),
    tests: (policy.tests ?? []).map(rowOfTest),
    restrictToRoutes: policy.restrictToRoutes ?? false,
    icmpProhibited: policy.icmpProhibited ?? true,
  };
}

/** The form as submitted (hono's parseBody: flat keys such as "rules.3.to"). */
export function valuesOfForm(body: Record<string, unknown>): GroupFormValues {
  const str = (k: string) => (typeof body[k] === "string" ? (body[k] as string) : "");
  const text: Record<string, string> = {};
  for (const f of [...LIST_FIELDS, ...NUMBER_FIELDS, ...TEXT_FIELDS]) text[f] = str(f);
  Object.assign(text, quotaTextOfBody(body));
  const rules = rulesOfBody(body);
  return {
    text,
    rulesMode: str("rulesMode") === "starter" ? "starter" : "explicit",
    rules,
    tests: testsOfBody(body),
    restrictToRoutes: str("restrictToRoutes") === "true",
    icmpProhibited: str("icmpProhibited") === "true",
  };
}

/** The rule rows of a submitted form (flat keys "rules.3.to"), in row order. */
export function rulesOfBody(body: Record<string, unknown>): RuleRow[] {
  const rows = new Map<number, RuleRow>();
  for (const key of Object.keys(body)) {
    const m = /^rules\.(\d{1,5})\.(\w+)$/.exec(key);
    if (!m || !(RULE_FIELDS as readonly string[]).includes(m[2]!)) continue;
    const index = Number(m[1]);
    const row = rows.get(index) ?? blankRule();
    row[m[2] as keyof RuleRow] = typeof body[key] === "string" ? (body[key] as string) : "";
    rows.set(index, row);
  }
  return [...rows.entries()].sort(([x], [y]) => x - y).map(([, row]) => row);
}

/** A stored rule as a form row. */
export function rowOfRule(r: Rule): RuleRow {
  return { action: r.action, direction: r.direction ?? "outbound", to: r.to, proto: r.proto, ports: r.ports ?? "", description: r.description ?? "" };
}

/** The rows that are rules (blank ones skipped) as the API takes them, and which row each came from. */
export function rulesOfRows(rows: readonly RuleRow[]): { rules: Record<string, unknown>[]; ruleRows: number[] } {
  const rules: Record<string, unknown>[] = [];
  const ruleRows: number[] = [];
  rows.forEach((row, index) => {
    if (isBlankRule(row)) return;
    ruleRows.push(index);
    rules.push({
      action: row.action,
      ...(row.direction === "inbound" ? { direction: "inbound" } : {}),
      to: row.to.trim(),
      proto: row.proto,
      ...(row.ports.trim() ? { ports: row.ports.trim() } : {}),
      ...(row.description.trim() ? { description: row.description.trim() } : {}),
    });
  });
  return { rules, ruleRows };
}

/** A row the operator left empty (the spare rows the form offers): not a rule. */
export const isBlankRule = (row: RuleRow) => row.to.trim() === "" && row.ports.trim() === "" && row.description.trim() === "";

export interface PolicyPatch {
  patch: Record<string, unknown>;
  /** patch.rules[i] came from form row ruleRows[i] (blank rows are skipped). */
  ruleRows: number[];
  /** patch.tests[i] came from form row testRows[i]. */
  testRows: number[];
}

/** The merge patch the form stands for: every field it shows is set, or removed (null) when blank. */
export function patchOfValues(v: GroupFormValues): PolicyPatch {
  const patch: Record<string, unknown> = {};
  for (const f of LIST_FIELDS) {
    const list = splitList(v.text[f] ?? "");
    // splitDns is optional: blank removes it (routes, excludeRoutes and dns are lists that may be empty).
    patch[f] = list.length === 0 && f === "splitDns" ? null : list;
  }
  for (const f of NUMBER_FIELDS) patch[f] = numberOrText(v.text[f] ?? "");
  for (const f of TEXT_FIELDS) {
    const t = (v.text[f] ?? "").trim();
    patch[f] = t === "" ? null : (f === "rateUp" || f === "rateDown") && /^\d+$/.test(t) ? Number(t) : t;
  }
  let ruleRows: number[] = [];
  if (v.rulesMode === "starter") patch.rules = null;
  else {
    const written = rulesOfRows(v.rules);
    patch.rules = written.rules;
    ruleRows = written.ruleRows;
  }
  const { tests, testRows } = testsOfRows(v.tests);
  patch.tests = tests.length > 0 ? tests : null;
  patch.quota = quotaOfText(v.text);
  // Absent means the default (restrictToRoutes false, icmpProhibited true): store only a departure from it.
  patch.restrictToRoutes = v.restrictToRoutes ? true : null;
  patch.icmpProhibited = v.icmpProhibited ? null : false;
  return { patch, ruleRows, testRows };
}

export function splitList(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Digits become a number; anything else is passed on as text, so the schema names the problem. */
export function numberOrText(text: string): number | string | null {
  const t = text.trim();
  if (t === "") return null;
  return /^-?\d+$/.test(t) ? Number(t) : t;
}

/** The group form's fields that show their own problems (the rest go to the summary above the form). */
const GROUP_FORM_FIELDS: readonly string[] = [...LIST_FIELDS, ...NUMBER_FIELDS, ...TEXT_FIELDS, "rules", "tests", "quota"];

/** Which form row each rule (and test) of the patch came from. */
export interface PatchRows {
  ruleRows: readonly number[];
  testRows?: readonly number[];
}

/**
 * Problems by form field name ("mtu", "routes", "rules.4.to", "tests.1", "quota.bytes"); those
 * without a field under "". A policy test the change breaks ("tests.2") goes beside its row.
 */
export function fieldErrors(details: readonly ProblemDetail[], rows: PatchRows, form: { lists: readonly string[]; fields: readonly string[] } = { lists: LIST_FIELDS, fields: GROUP_FORM_FIELDS }): Map<string, string[]> {
  const { ruleRows, testRows = [] } = rows;
  const errors = new Map<string, string[]>();
  const add = (field: string, message: string) => errors.set(field, [...(errors.get(field) ?? []), message]);
  for (const d of details) {
    const parts = d.path.split(".").filter(Boolean);
    const [head, second, third] = parts;
    if (head === "rules" && second !== undefined && /^\d+$/.test(second)) {
      const row = ruleRows[Number(second)] ?? Number(second);
      add(third && (RULE_FIELDS as readonly string[]).includes(third) ? `rules.${row}.${third}` : `rules.${row}`, d.message);
    } else if (head === "tests" && form.fields.includes(head) && second !== undefined && /^\d+$/.test(second)) {
      const row = testRows[Number(second)] ?? Number(second);
      add(third && (TEST_FIELDS as readonly string[]).includes(third) ? `tests.${row}.${third}` : `tests.${row}`, d.message);
    } else if (head === "quota" && form.fields.includes(head)) {
      // A problem of the whole quota (a missing field) is shown beside the amount.
      add(second && (QUOTA_FIELDS as readonly string[]).includes(second) ? quotaInput(second as (typeof QUOTA_FIELDS)[number]) : quotaInput("bytes"), d.message);
    } else if (head && form.lists.includes(head) && second !== undefined) {
      add(head, `entry ${Number(second) + 1}: ${d.message}`);
    } else if (head && form.fields.includes(head)) {
      add(head, d.message);
    } else {
      // A problem of no field the form shows (a policy test the change breaks): in the summary, with its path.
      add("", d.path ? `${d.path}: ${d.message}` : d.message);
    }
  }
  return errors;
}
