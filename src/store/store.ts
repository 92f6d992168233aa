import type { ApiTokenRecord, AuditRecord, GroupRecord, NewAuditRecord, UserRecord } from "./records.ts";

/**
 * The storage interface of the control plane. Calls are synchronous: node:sqlite is, and the
 * data plane never calls the store (ARCHITECTURE.md, "The shape").
 */
export interface Store {
  getUser(name: string): UserRecord | undefined;
  listUsers(): UserRecord[];
  insertUser(user: UserRecord): void;
  updateUser(user: UserRecord): void;
  deleteUser(name: string): boolean;
  recordLoginFailure(name: string): void;
  recordLoginSuccess(name: string, at: number): void;

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
  /** Oldest first, ids above afterId, at most limit. */
  listAudit(afterId: number, limit: number): AuditRecord[];

  getMeta(key: string): string | undefined;
  setMeta(key: string, value: string): void;

  /** Runs fn atomically: all of its writes land, or none. */
  transaction<T>(fn: () => T): T;
  close(): void;
}
