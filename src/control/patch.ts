import { err, ok, type Result } from "../errors.ts";

/**
 * JSON merge patch (RFC 7396, one level): fields present replace, null removes. The merged
 * document is then validated as a whole by the caller, so a bad patch changes nothing.
 */
export function mergePatch(current: Record<string, unknown>, patch: unknown): Result<Record<string, unknown>> {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) {
    return err("invalid_input", "a patch is a JSON object", [{ path: "", message: "expected an object" }]);
  }
  const merged: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return ok(merged);
}
