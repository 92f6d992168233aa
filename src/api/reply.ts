import type { Context } from "hono";
import { GwError, type Result } from "../errors.ts";
import { fromGwError } from "./errors.ts";

export type SuccessStatus = 200 | 201 | 204;

/** A value with the status it earns, where the route's one success status is not enough. */
export class WithStatus<T> {
  constructor(
    readonly value: T,
    readonly status: SuccessStatus,
  ) {}
}

/** PUT answers 201 when it created the resource and 200 when it replaced it. */
export const createdOrReplaced = <T>(value: T, created: boolean) => new WithStatus(value, created ? 201 : 200);

function isResult(v: unknown): v is Result<unknown> {
  if (typeof v !== "object" || v === null || !("ok" in v)) return false;
  return v.ok === true ? "value" in v : v.ok === false && "error" in v && v.error instanceof GwError;
}

/**
 * The one way a handler's outcome becomes a response: an error Result is the error body with
 * its code's status; a value (or an ok Result's value) is JSON with `status`, or no body for 204.
 */
export function reply(c: Context, outcome: unknown, status: SuccessStatus): Response {
  let value = outcome;
  if (isResult(value)) {
    if (!value.ok) return fromGwError(c, value.error);
    value = value.value;
  }
  if (value instanceof WithStatus) {
    status = value.status;
    value = value.value;
  }
  return status === 204 ? c.body(null, 204) : c.json(value, status);
}
