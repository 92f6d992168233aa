import type { ImportPlan } from "./ocserv-import-plan.ts";

/** An API call (ApiClient.call): throws a GwError with the API's code and message on failure. */
export type ApiCall = <T = unknown>(method: string, path: string, body?: unknown) => Promise<T>;

export interface ImportOutcome {
  done: string[];
  failed: string[];
}

const users = (name: string) => `/api/v1/users/${encodeURIComponent(name)}`;

/**
 * Applies a plan through the management API, so every change is validated and audited like any
 * other: the settings document first (merged over the stored one), then groups, then users, their
 * password hashes and OTP tokens. A failing item is reported and the rest goes on.
 */
export async function applyOcservImport(plan: ImportPlan, call: ApiCall): Promise<ImportOutcome> {
  const outcome: ImportOutcome = { done: [], failed: [] };
  const attempt = async (what: string, step: () => Promise<unknown>) => {
    try {
      await step();
      outcome.done.push(what);
    } catch (e) {
      outcome.failed.push(`${what}: ${(e as Error).message}`);
    }
  };
  if (Object.keys(plan.settings).length) {
    await attempt("settings", async () => {
      const current = await call<Record<string, unknown>>("GET", "/api/v1/config");
      const groupDefaults = { ...(current.groupDefaults as object | undefined), ...(plan.settings.groupDefaults as object | undefined) };
      const merged = { ...current, ...plan.settings, ...(Object.keys(groupDefaults).length ? { groupDefaults } : {}) };
      await call("PUT", "/api/v1/config", merged);
    });
  }
  for (const g of plan.groups) await attempt(`group ${g.name}`, () => call("PUT", `/api/v1/groups/${encodeURIComponent(g.name)}`, g.policy));
  for (const u of plan.users) {
    const created = outcome.failed.length;
    await attempt(`user ${u.name}`, () => call("PUT", users(u.name), { groups: u.groups, ...u.overrides }));
    if (outcome.failed.length > created) continue;
    if (u.hash !== undefined) await attempt(`password of ${u.name}`, () => call("PUT", `${users(u.name)}/password-hash`, { hash: u.hash }));
    if (u.otpSecret !== undefined) await attempt(`one-time codes of ${u.name}`, () => call("POST", `${users(u.name)}/otp`, { secret: u.otpSecret }));
  }
  return outcome;
}
