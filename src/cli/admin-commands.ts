import type { AdminView } from "../control/admins.ts";
import { adminOtpCommand } from "./admin-otp-commands.ts";
import { apiChange, apiRead } from "./api-commands.ts";
import { UsageError } from "./args.ts";
import { group } from "./command-group.ts";
import { time } from "./output.ts";
import { readSecretFromStdin } from "./stdin.ts";

const nameArg = { name: { type: "positional", required: true, description: "Account name" } } as const;
const a = (name: string) => `/api/v1/admins/${encodeURIComponent(name)}`;

async function passwordFromStdin(): Promise<string> {
  const password = await readSecretFromStdin();
  if (!password) throw new UsageError("--password-stdin: standard input held no password");
  return password;
}

function roleOf(text: string | undefined): "admin" | "read" {
  if (text !== "admin" && text !== "read") throw new UsageError(`--role must be admin or read, got "${text ?? ""}"`);
  return text;
}

const add = apiChange({
  name: "add",
  description: "Create a web UI account (password from standard input)",
  options: {
    ...nameArg,
    role: { type: "string", required: true, description: "admin (may change everything) or read (sees everything, changes nothing)" },
    "password-stdin": { type: "boolean", description: "Read the password from standard input (first line); required" },
  },
  request: async (o) => {
    const role = roleOf(o.role);
    if (!o["password-stdin"]) throw new UsageError("give the password on standard input with --password-stdin");
    return { method: "POST", path: "/api/v1/admins", body: { name: o.name, role, password: await passwordFromStdin() } };
  },
  done: (o) => `admin ${o.name} (${o.role}) created: sign in at the management API's /ui ('gw admin otp enroll ${o.name}' adds one-time codes)`,
});

const list = apiRead({
  name: "list",
  description: "List web UI accounts",
  options: {},
  path: () => "/api/v1/admins",
  view: (admins: AdminView[]) => ({
    table: admins.map((x) => ({ name: x.name, role: x.role, otp: x.otp.enrolled ? "yes" : "no", created: time(x.createdAt), "last sign-in": x.lastLoginAt ? time(x.lastLoginAt) : "never" })),
    columns: ["name", "role", "otp", "created", "last sign-in"],
  }),
});

const passwd = apiChange({
  name: "passwd",
  description: "Set a web UI account's password (from standard input)",
  options: { ...nameArg, "password-stdin": { type: "boolean", description: "Read the password from standard input (first line); required" } },
  request: async (o) => {
    if (!o["password-stdin"]) throw new UsageError("give the password on standard input with --password-stdin");
    return { method: "PUT", path: `${a(o.name)}/password`, body: { password: await passwordFromStdin() } };
  },
  done: (o) => `password of admin ${o.name} changed`,
});

const role = apiChange({
  name: "role",
  description: "Change a web UI account's role",
  options: { ...nameArg, role: { type: "positional", required: true, description: "admin or read" } },
  request: (o) => ({ method: "PATCH", path: a(o.name), body: { role: roleOf(o.role) } }),
  done: (o) => `admin ${o.name} now has role ${o.role}`,
});

const remove = apiChange({
  name: "remove",
  description: "Delete a web UI account",
  options: nameArg,
  request: (o) => ({ method: "DELETE", path: a(o.name) }),
  done: (o) => `admin ${o.name} deleted`,
});

export const adminCommand = group("admin", "Web UI accounts: who may sign in, with which role", [add, list, passwd, role, remove, adminOtpCommand]);
