import type { CreatedToken, TokenView } from "../control/tokens.ts";
import { apiChange, apiRead } from "./api-commands.ts";
import { durationOption, UsageError } from "./args.ts";
import { command } from "./command.ts";
import { group } from "./command-group.ts";
import { time } from "./output.ts";

const nameArg = { name: { type: "positional", required: true, description: "Token name" } } as const;

const create = command({
  name: "create",
  description: "Create an API token; prints the secret alone on stdout (shown once)",
  reach: "api",
  options: {
    ...nameArg,
    scope: { type: "string", required: true, description: "admin (may change everything) or read (may only look)" },
    expires: { type: "string", description: "Lifetime, e.g. 30d, 12h (default: never expires)" },
  },
  json: "JSON output",
  async run({ options: o, gw }) {
    if (o.scope !== "admin" && o.scope !== "read") throw new UsageError(`--scope must be admin or read, got "${o.scope}"`);
    const expiresAt = o.expires ? Date.now() + durationOption(o.expires, "expires") : undefined;
    const token = await gw.call<CreatedToken>("POST", "/api/v1/tokens", { name: o.name, scope: o.scope, ...(expiresAt ? { expiresAt } : {}) });
    const lifetime = token.expiresAt ? `, expires ${time(token.expiresAt)}` : "";
    return { data: token, view: { lines: [token.secret] }, notes: [`token ${token.name} (${token.scope}${lifetime}) created: the secret above is shown once`] };
  },
});

const list = apiRead({
  name: "list",
  description: "List API tokens (never their secrets)",
  options: {},
  path: () => "/api/v1/tokens",
  view: (tokens: TokenView[]) => ({
    table: tokens.map((t) => ({ name: t.name, id: t.id, scope: t.scope, created: time(t.createdAt), expires: t.expiresAt ? `${time(t.expiresAt)}${t.expired ? " (expired)" : ""}` : "never" })),
    columns: ["name", "id", "scope", "created", "expires"],
  }),
});

const revoke = apiChange({
  name: "revoke",
  description: "Revoke an API token (by name or id)",
  options: nameArg,
  request: (o) => ({ method: "DELETE", path: `/api/v1/tokens/${encodeURIComponent(o.name)}` }),
  done: (o) => `token ${o.name} revoked`,
});

export const tokenCommand = group("token", "Manage management-API tokens", [create, list, revoke]);
