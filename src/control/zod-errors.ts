import type { z } from "zod";
import { err, type Result } from "../errors.ts";

export interface ProblemDetail {
  path: string;
  message: string;
}

/** Every problem with its path; an unknown field is reported at its own path. */
export function issueDetails(issues: readonly z.core.$ZodIssue[]): ProblemDetail[] {
  return issues.flatMap((i) => {
    const base = i.path.map(String);
    if (i.code === "unrecognized_keys") return i.keys.map((k) => ({ path: [...base, k].join("."), message: "unknown field" }));
    return [{ path: base.join("."), message: i.message }];
  });
}

export function summarize(details: ProblemDetail[]): string {
  return details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join("; ");
}

/** Turns a zod failure into our error value: every problem with its path. */
export function validationError<T = never>(error: z.ZodError, what: string): Result<T> {
  const details = issueDetails(error.issues);
  return err("invalid_input", `invalid ${what}: ${summarize(details)}`, details);
}
