import type { AuditEntry, AuditLog } from "../control/audit.ts";

export interface AuditFilter {
  /** Substrings, case-insensitive; blank matches everything. */
  actor: string;
  action: string;
  target: string;
}

/** Entries read per store query while filtering (the store pages by id). */
const BATCH = 1000;
/** At most this many entries are scanned for one page (a filter matching nothing stays cheap). */
const MAX_SCANNED = 50_000;

const matches = (entry: AuditEntry, f: AuditFilter) =>
  [["actor", entry.actor], ["action", entry.action], ["target", entry.target]].every(([k, v]) => {
    const needle = f[k as keyof AuditFilter].toLowerCase();
    return !needle || v!.toLowerCase().includes(needle);
  });

/** One page of matching entries after `after`, oldest first; `scannedTo` is where the next page starts. */
export function findAudit(log: AuditLog, filter: AuditFilter, after: number, limit: number): { entries: AuditEntry[]; scannedTo: number; more: boolean } {
  const entries: AuditEntry[] = [];
  let cursor = after;
  let scanned = 0;
  while (entries.length < limit && scanned < MAX_SCANNED) {
    const batch = log.list(cursor, BATCH);
    if (batch.length === 0) return { entries, scannedTo: cursor, more: false };
    for (const e of batch) {
      cursor = e.id;
      scanned++;
      if (matches(e, filter) && entries.push(e) >= limit) break;
    }
    if (batch.length < BATCH && entries.length < limit) return { entries, scannedTo: cursor, more: false };
  }
  return { entries, scannedTo: cursor, more: true };
}

/** One changed field of a change: what it was and what it became (undefined: absent). */
export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
}

/**
 * The before/after of an audit entry, field by field (one level deep): only what changed. A
 * value that is not an object is one field named "value".
 */
export function diffOf(before: unknown, after: unknown): FieldChange[] {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
  if (!isObject(before) && !isObject(after)) return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ field: "value", before: before ?? undefined, after: after ?? undefined }];
  const b = isObject(before) ? before : {};
  const a = isObject(after) ? after : {};
  const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])];
  return keys.filter((k) => JSON.stringify(b[k]) !== JSON.stringify(a[k])).map((k) => ({ field: k, before: b[k], after: a[k] }));
}

/** The newest `n` entries about one target (exact name), newest first; scans at most MAX_SCANNED entries from the oldest. */
export function recentAuditFor(log: AuditLog, target: string, n: number): AuditEntry[] {
  const found: AuditEntry[] = [];
  let cursor = 0;
  for (let scanned = 0; scanned < MAX_SCANNED; ) {
    const batch = log.list(cursor, BATCH);
    for (const e of batch) {
      if (e.target === target) {
        found.push(e);
        if (found.length > n) found.shift();
      }
    }
    if (batch.length < BATCH) break;
    cursor = batch.at(-1)!.id;
    scanned += batch.length;
  }
  return found.reverse();
}
