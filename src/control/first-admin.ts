import { randomBytes } from "node:crypto";
import type { AdminService } from "./admins.ts";

export const FIRST_ADMIN_NAME = "admin";

export interface FirstAdmin {
  name: string;
  /** Printed once by `gw serve`; only its hash is stored. */
  password: string;
}

/**
 * On the first start of a data directory without any admin account, creates `admin` with a
 * random password so the web UI can be signed into at once. Later starts (or a directory where
 * `gw admin add` ran first) return undefined and change nothing.
 */
export async function ensureFirstAdmin(admins: AdminService): Promise<FirstAdmin | undefined> {
  if (admins.list().length > 0) return undefined;
  // 18 random bytes: 24 characters of base64url, well above the 8-character minimum.
  const password = randomBytes(18).toString("base64url");
  const added = await admins.add({ name: FIRST_ADMIN_NAME, role: "admin", password }, "gw-serve");
  return added.ok ? { name: FIRST_ADMIN_NAME, password } : undefined;
}

/** The one line `gw serve` prints. */
export function describeFirstAdmin(first: FirstAdmin, uiUrl: string): string {
  return `web UI admin account created (password shown once; store it now): name ${first.name}, password ${first.password}; sign in at ${uiUrl}; change it with 'gw admin passwd ${first.name}'`;
}
