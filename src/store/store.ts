import type { AdminRecord, ApiTokenRecord, AuditOrder, AuditRecord, GroupRecord, NewAuditRecord, OtpRecord, UserRecord } from "./records.ts";
import type { UsageStore } from "./usage-records.ts";

/**
 * The storage interface of the control plane. Calls are synchronous: node:sqlite is, and the
 * data plane never calls the store (docs/architecture.md §1 "The shape").
 */
export interface Store {
  getUser(name: string): UserRecord | undefined;
  listUsers(): UserRecord[];
  /** How many users and groups there are (status): one query each, not a list. */
  countUsers(): number;
  countGroups(): number;
  insertUser(user: UserRecord): void;
  updateUser(user: UserRecord): void;
  deleteUser(name: string): boolean;
  recordLoginFailure(name: string): void;
  recordLoginSuccess(name: string, at: number): void;

  getOtp(user: string): OtpRecord | undefined;
  /** Inserts or replaces the user's enrolment. */
  putOtp(record: OtpRecord): void;
  deleteOtp(user: string): boolean;
  /**
   * Records an accepted code's step, atomically: false when that step (or a later one) was
   * already used, e.g. by a concurrent login with the same code.
   */
  markOtpStepUsed(user: string, step: number): boolean;

  getGroup(name: string): GroupRecord | undefined;
  listGroups(): GroupRecord[];
  insertGroup(group: GroupRecord): void;
  updateGroup(group: GroupRecord): void;
  deleteGroup(name: string): boolean;
  /** Users that list the group. */
  groupMembers(name: string): string[];

  insertApiToken(token: ApiTokenRecord): void;
  listApiTokens(): ApiTokenRecord[];
  findApiTokenByHash(secretHash: string): ApiTokenRecord | undefined;
  deleteApiToken(id: string): boolean;

  /** Appends to the audit log; returns the record's id. */
  appendAudit(record: NewAuditRecord): number;
  /** Ids above afterId, at most limit: the oldest of them first, or with order "newest" the newest first. */
  listAudit(afterId: number, limit: number, order?: AuditOrder): AuditRecord[];

  getAdmin(name: string): AdminRecord | undefined;
  listAdmins(): AdminRecord[];
  /** Inserts or replaces the admin. */
  putAdmin(admin: AdminRecord): void;
  deleteAdmin(name: string): boolean;
  /** As markOtpStepUsed, for an admin's TOTP. */
  markAdminOtpStepUsed(name: string, step: number): boolean;

  /** The usage ledger's rows (control/usage/). */
  readonly usage: UsageStore;

  getMeta(key: string): string | undefined;
  setMeta(key: string, value: string): void;

  /** Runs fn atomically: all of its writes land, or none. */
  transaction<T>(fn: () => T): T;
  close(): void;
}
