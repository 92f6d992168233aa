import type { z } from "zod";
import { err, type Result } from "../errors.ts";

/** Turns a zod failure into our error value: every problem with its path. */
export function validationError<T = never>(error: z.ZodError, what: string): Result<T> {
  const details = error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
  const summary = details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join("; ");
  return err("invalid_input", `invalid ${what}: ${summary}`, details);
}
