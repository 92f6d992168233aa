/**
 * Errors are values: a stable machine code and a message that tells the operator what to do.
 * Functions that can fail for expected reasons return Result<T>; GwError is thrown only across
 * boundaries where a Result would be noise (CLI command bodies, startup).
 */
export class GwError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = "GwError";
  }
}

export type Result<T> = { ok: true; value: T } | { ok: false; error: GwError };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const err = <T = never>(code: string, message: string, details?: unknown): Result<T> => ({
  ok: false,
  error: new GwError(code, message, details),
});

/** Unwraps a Result, throwing its GwError. */
export function unwrap<T>(r: Result<T>): T {
  if (!r.ok) throw r.error;
  return r.value;
}
