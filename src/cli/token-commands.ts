import { defineCommand } from "citty";
import type { CreatedToken, TokenView } from "../control/tokens.ts";
import { durationOption, rejectUnknownOptions, UsageError } from "./args.ts";
import { connectArgs, withApi } from "./connect.ts";
import { printJson, printTable, time } from "./output.ts";

const json = { json: { type: "boolean", description: "JSON output" } } as const;
const nameArg = { name: { type: "positional", required: true, description: "Token name" } } as const;

const createArgs = {
  ...connectArgs,
  ...nameArg,
  scope: { type: "string", required: true, description: "admin (may change everything) or read (may only look)" },
  expires: { type: "string", description: "Lifetime, e.g. 30d, 12h (default: never expires)" },
  ...json,
} as const;

const create = defineCommand({
  meta: { name: "create", description: "Create an API token; prints the secret alone on stdout (shown once)" },
  args: createArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, createArgs);
    if (args.scope !== "admin" && args.scope !== "read") throw new UsageError(`--scope must be admin or read, got "${args.scope}"`);
    const expiresAt = args.expires ? Date.now() + durationOption(args.expires, "expires") : undefined;
    const token = await withApi(args, (api) => api.call<CreatedToken>("POST", "/api/v1/tokens", { name: args.name, scope: args.scope, ...(expiresAt ? { expiresAt } : {}) }));
    if (args.json) return printJson(token);
    console.log(token.secret);
    console.error(`token ${token.name} (${token.scope}${token.expiresAt ? `, expires ${time(token.expiresAt)}` : ""}) created: the secret above is shown once`);
  },
});

const listArgs = { ...connectArgs, ...json } as const;

const list = defineCommand({
  meta: { name: "list", description: "List API tokens (never their secrets)" },
  args: listArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, listArgs);
    const tokens = await withApi(args, (api) => api.call<TokenView[]>("GET", "/api/v1/tokens"));
    if (args.json) return printJson(tokens);
    printTable(
      tokens.map((t) => ({ name: t.name, id: t.id, scope: t.scope, created: time(t.createdAt), expires: t.expiresAt ? `${time(t.expiresAt)}${t.expired ? " (expired)" : ""}` : "never" })),
      ["name", "id", "scope", "created", "expires"],
    );
  },
});

const revokeArgs = { ...connectArgs, ...nameArg } as const;

const revoke = defineCommand({
  meta: { name: "revoke", description: "Revoke an API token (by name or id)" },
  args: revokeArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, revokeArgs);
    await withApi(args, (api) => api.call("DELETE", `/api/v1/tokens/${encodeURIComponent(args.name)}`));
    console.error(`token ${args.name} revoked`);
  },
});

export const tokenCommand = defineCommand({
  meta: { name: "token", description: "Manage management-API tokens" },
  subCommands: { create, list, revoke },
});
