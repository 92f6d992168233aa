import { err, ok, type Result } from "../errors.ts";
import type { PasswordHasher } from "../runtime/password-hasher.ts";
import type { UserRecord } from "../store/records.ts";
import type { Store } from "../store/store.ts";
import { userNameSchema } from "./names.ts";
import { validationError } from "./zod-errors.ts";

export interface UserView {
  name: string;
  groups: string[];
  disabled: boolean;
  hasPassword: boolean;
  failedLogins: number;
  lastLoginAt: number | null;
  createdAt: number;
}

export interface NewUser {
  name: string;
  password?: string;
  groups: string[];
}

/** A password nobody can type: a user added without one cannot log in with a password. */
const NO_PASSWORD = "!";

export const MAX_PASSWORD_LENGTH = 1024;

export class UserService {
  constructor(
    private readonly store: Store,
    private readonly hasher: PasswordHasher,
    private readonly now: () => number,
  ) {}

  async add(input: NewUser): Promise<Result<UserView>> {
    const name = userNameSchema.safeParse(input.name);
    if (!name.success) return validationError(name.error, "user name");
    if (this.store.getUser(input.name)) return err("user_exists", `user ${input.name} already exists`);
    const groups = this.checkGroups(input.groups);
    if (!groups.ok) return groups;
    const password = checkPassword(input.password);
    if (!password.ok) return password;
    const record: UserRecord = {
      name: input.name,
      passwordHash: input.password === undefined ? NO_PASSWORD : await this.hasher.hash(input.password),
      disabled: false,
      groups: groups.value,
      failedLogins: 0,
      lastLoginAt: null,
      createdAt: this.now(),
    };
    // Checked again after the (slow) hash: another writer may have added the same name meanwhile.
    if (this.store.getUser(input.name)) return err("user_exists", `user ${input.name} already exists`);
    this.store.insertUser(record);
    return ok(toView(record));
  }

  get(name: string): Result<UserView> {
    const record = this.store.getUser(name);
    return record ? ok(toView(record)) : err("user_not_found", `no user named ${name}: 'gw user list' shows the users`);
  }

  list(): UserView[] {
    return this.store.listUsers().map(toView);
  }

  remove(name: string): Result<void> {
    return this.store.deleteUser(name) ? ok(undefined) : err("user_not_found", `no user named ${name}`);
  }

  /**
   * Checks a password. Unknown users cost one hash verification too, so response time does
   * not tell which user names exist.
   */
  async verifyPassword(name: string, password: string): Promise<UserRecord | undefined> {
    const record = this.store.getUser(name);
    const phc = record && record.passwordHash !== NO_PASSWORD ? record.passwordHash : await this.dummyHash();
    const valid = password.length <= MAX_PASSWORD_LENGTH && (await this.hasher.verify(password, phc));
    return valid && record && record.passwordHash !== NO_PASSWORD ? record : undefined;
  }

  recordFailure(name: string): void {
    this.store.recordLoginFailure(name);
  }

  recordSuccess(name: string): void {
    this.store.recordLoginSuccess(name, this.now());
  }

  private dummy: Promise<string> | undefined;
  private dummyHash(): Promise<string> {
    this.dummy ??= this.hasher.hash("gw-dummy-password-for-unknown-users");
    return this.dummy;
  }

  private checkGroups(groups: string[]): Result<string[]> {
    const unique = [...new Set(groups)];
    const missing = unique.filter((g) => !this.store.getGroup(g));
    if (missing.length > 0) {
      return err("group_not_found", `unknown group ${missing.join(", ")}: create it first with 'gw group add ${missing[0]}'`);
    }
    return ok(unique);
  }
}

function checkPassword(password: string | undefined): Result<void> {
  if (password === undefined) return ok(undefined);
  if (password.length === 0) return err("invalid_input", "the password is empty");
  if (password.length > MAX_PASSWORD_LENGTH) return err("invalid_input", `the password is longer than ${MAX_PASSWORD_LENGTH} characters`);
  return ok(undefined);
}

function toView(record: UserRecord): UserView {
  return {
    name: record.name,
    groups: record.groups,
    disabled: record.disabled,
    hasPassword: record.passwordHash !== NO_PASSWORD,
    failedLogins: record.failedLogins,
    lastLoginAt: record.lastLoginAt,
    createdAt: record.createdAt,
  };
}
