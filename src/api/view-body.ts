import { z } from "zod";
import { err, ok, type Result } from "../errors.ts";
import type { ProblemDetail } from "../control/zod-errors.ts";

/**
 * PUT accepts the document GET returned: an operator GETs a resource, edits a field and PUTs the
 * whole view back. The view's extra fields (createdAt, members, …) are read-only: sent back
 * unchanged they are ignored, changed they are refused with their path (nothing is dropped
 * silently). The document part is validated by the route's own schema, as before.
 */
export interface ViewBody<T> {
  document: T;
  /** The read-only fields the body carried, to be compared with the current view. */
  readOnly: Record<string, unknown>;
}

/** The keys a view has and its writable document lacks: derived, so a new view field is covered. */
export function viewOnlyKeys(view: z.ZodObject, document: z.ZodObject): string[] {
  return Object.keys(view.shape).filter((k) => !(k in document.shape));
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * A body schema admitting the document, or the view around it. `wrapKey` names the view field that
 * holds the document when the view nests it (a group's `policy`); a body without that key is the
 * bare document, validated with the same paths as before.
 */
export function viewBody<T>(document: z.ZodType<T>, readOnlyKeys: readonly string[], wrapKey?: string): z.ZodType<ViewBody<T>> {
  return z.unknown().transform((body, ctx): ViewBody<T> => {
    const readOnly: Record<string, unknown> = {};
    let part: unknown = body;
    let prefix: string[] = [];
    if (isPlainObject(body) && (wrapKey === undefined || Object.hasOwn(body, wrapKey))) {
      const rest: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(body)) {
        if (readOnlyKeys.includes(k)) readOnly[k] = v;
        else rest[k] = v;
      }
      if (wrapKey !== undefined) {
        const unknownKeys = Object.keys(rest).filter((k) => k !== wrapKey);
        if (unknownKeys.length) ctx.addIssue({ code: "unrecognized_keys", keys: unknownKeys, input: body, path: [] } as never);
        part = rest[wrapKey];
        prefix = [wrapKey];
      } else part = rest;
    }
    const parsed = document.safeParse(part);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, path: [...prefix, ...issue.path] } as never);
      return z.NEVER;
    }
    return { document: parsed.data, readOnly };
  });
}

function same(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].every((k) => same(a[k], b[k]));
  }
  return false;
}

/**
 * Read-only fields must match: `name` the one in the path, the others the current view. A resource
 * that does not exist yet has nothing to compare with, so a copy of another's view creates it.
 */
export function readOnlyUnchanged(readOnly: Record<string, unknown>, name: string, current: Record<string, unknown> | undefined): Result<void> {
  const details: ProblemDetail[] = [];
  for (const [key, value] of Object.entries(readOnly)) {
    if (key === "name") {
      if (value !== name) details.push({ path: key, message: `read-only: the name is the one in the path (${name}); to rename, create the new one and delete the old` });
    } else if (current && !same(value, current[key])) {
      details.push({ path: key, message: "read-only: send it back unchanged or leave it out" });
    }
  }
  if (!details.length) return ok(undefined);
  return err("invalid_input", `invalid body: ${details.map((d) => `${d.path}: ${d.message}`).join("; ")}`, details);
}
