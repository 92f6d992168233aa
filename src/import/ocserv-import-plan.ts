import { base32Encode } from "../control/auth/base32.ts";
import { groupNameSchema, userNameProblem } from "../control/names.ts";
import { parseOathUsers } from "./oath-users-file.ts";
import { parseOcpasswd } from "./ocpasswd-file.ts";
import { parseOcservConfig } from "./ocserv-config-file.ts";
import { mapOptions, type Mapped, type Scope } from "./ocserv-options.ts";

/** The texts an import reads (the CLI reads the files; this stays pure). */
export interface OcservFiles {
  config: string;
  passwd?: string;
  otp?: string;
  /** config-per-group files: the file name is the group's name. */
  groupFiles?: { name: string; text: string }[];
  /** config-per-user files: the file name is the user's name. */
  userFiles?: { name: string; text: string }[];
}

export interface ImportedUser {
  name: string;
  groups: string[];
  /** Per-user policy overrides and a static address (the user document's fields). */
  overrides: Record<string, unknown>;
  /** The ocpasswd hash as it is ($1$, $5$, $6$; "!" in front when locked). */
  hash?: string;
  /** Base32 TOTP secret from the otp= file. */
  otpSecret?: string;
}

/** What `gw import ocserv` will do, and its report. Applying it goes through the API (validated, audited). */
export interface ImportPlan {
  /** Top-level settings to set over the stored document, groupDefaults included. */
  settings: Record<string, unknown>;
  groups: { name: string; policy: Record<string, unknown> }[];
  users: ImportedUser[];
  mapped: string[];
  unmapped: string[];
  /** What was read but is not imported, and why (bad values, bad names, OTP tokens gw cannot take). */
  problems: string[];
}

export function planOcservImport(files: OcservFiles): ImportPlan {
  const plan: ImportPlan = { settings: {}, groups: [], users: [], mapped: [], unmapped: [], problems: [] };
  const global = mapFile(files.config, "global", "ocserv.conf", plan);
  plan.settings = { ...global.settings, ...(Object.keys(global.policy).length ? { groupDefaults: global.policy } : {}) };

  const groups = new Map<string, Record<string, unknown>>();
  for (const file of files.groupFiles ?? []) {
    if (!groupNameSchema.safeParse(file.name).success) {
      plan.problems.push(`config-per-group/${file.name}: not a gw group name (letters, digits, '.', '_', '-'): skipped`);
      continue;
    }
    groups.set(file.name, mapFile(file.text, "group", `group ${file.name}`, plan).policy);
  }

  const users = new Map<string, ImportedUser>();
  const passwd = files.passwd === undefined ? undefined : parseOcpasswd(files.passwd);
  for (const p of passwd?.problems ?? []) plan.problems.push(`passwd ${p}`);
  for (const entry of passwd?.entries ?? []) {
    const bad = userNameProblem(entry.name);
    if (bad) {
      plan.problems.push(`passwd user ${JSON.stringify(entry.name)}: ${bad}: skipped`);
      continue;
    }
    const memberOf = entry.groups.filter((g) => {
      if (groupNameSchema.safeParse(g).success) return true;
      plan.problems.push(`passwd user ${entry.name}: group ${JSON.stringify(g)} is not a gw group name: left out`);
      return false;
    });
    for (const g of memberOf) if (!groups.has(g)) groups.set(g, {});
    users.set(entry.name, { name: entry.name, groups: memberOf, overrides: {}, hash: entry.hash });
    if (entry.locked) plan.mapped.push(`passwd user ${entry.name}: locked (stays locked)`);
  }
  for (const file of files.userFiles ?? []) {
    const bad = userNameProblem(file.name);
    if (bad) {
      plan.problems.push(`config-per-user/${file.name}: ${bad}: skipped`);
      continue;
    }
    const user = users.get(file.name) ?? { name: file.name, groups: [], overrides: {} };
    if (!users.has(file.name)) plan.mapped.push(`config-per-user/${file.name}: user without a passwd entry, added without a password`);
    user.overrides = mapFile(file.text, "user", `user ${file.name}`, plan).policy;
    users.set(file.name, user);
  }

  const otp = files.otp === undefined ? undefined : parseOathUsers(files.otp);
  for (const p of otp?.problems ?? []) plan.problems.push(`otp ${p}`);
  for (const token of otp?.users ?? []) {
    const user = users.get(token.user);
    if (!user) plan.problems.push(`otp user ${token.user}: not among the imported users: skipped`);
    else if (!token.importable) plan.problems.push(`otp user ${token.user}: ${token.type}: ${token.reason}: skipped (enrol again with 'gw user otp enroll')`);
    else {
      user.otpSecret = base32Encode(Buffer.from(token.keyHex, "hex"));
      plan.mapped.push(`otp user ${token.user}: ${token.type} -> TOTP enrolment`);
    }
  }
  plan.groups = [...groups].map(([name, policy]) => ({ name, policy }));
  plan.users = [...users.values()];
  return plan;
}

function mapFile(text: string, scope: Scope, label: string, plan: ImportPlan): Mapped {
  const parsed = parseOcservConfig(text);
  const mapped = mapOptions(parsed.options, scope);
  plan.mapped.push(...mapped.mapped.map((m) => `${label}: ${m}`));
  plan.unmapped.push(...mapped.unmapped.map((m) => `${label}: ${m}`));
  plan.problems.push(...parsed.problems.map((p) => `${label} ${p}`), ...mapped.problems.map((p) => `${label}: ${p}`));
  return mapped;
}

/** The files an ocserv.conf names (auth=plain[passwd=..,otp=..], config-per-group, config-per-user): read them before planning. */
export function ocservFileReferences(config: string): Mapped["files"] {
  return mapOptions(parseOcservConfig(config).options, "global").files;
}
