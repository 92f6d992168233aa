import { createHash, randomBytes } from "node:crypto";
import type { Store } from "../store/store.ts";

export function hashApiSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/**
 * On first start the gateway has no API token: it creates an admin token and returns its
 * secret, to be printed once. Only the hash is stored; later starts return undefined.
 */
export function ensureAdminToken(store: Store, now: number): string | undefined {
  // The server's own local-cli token (serve/api-discovery.ts) does not count.
  if (store.listApiTokens().some((t) => t.name !== "local-cli") || store.getMeta("admin_token_issued") === "1") return undefined;
  const secret = `gw_${randomBytes(32).toString("base64url")}`;
  store.transaction(() => {
    store.insertApiToken({
      id: randomBytes(8).toString("hex"),
      name: "admin",
      secretHash: hashApiSecret(secret),
      scope: "admin",
      createdAt: now,
      expiresAt: null,
    });
    store.setMeta("admin_token_issued", "1");
  });
  return secret;
}
