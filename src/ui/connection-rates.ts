import type { ConnectionView } from "../control/connections.ts";

export interface ConnectionRate {
  /** Bytes per second from the client, and to it. */
  in: number;
  out: number;
}

/**
 * Per-connection rates from the byte counters' change between two looks (one live stream's
 * ticks). A connection seen for the first time has no rate yet; those gone are forgotten.
 */
export class ConnectionRates {
  private last = new Map<string, { t: number; in: number; out: number }>();

  update(connections: readonly ConnectionView[], now: number): Map<string, ConnectionRate> {
    const rates = new Map<string, ConnectionRate>();
    const next = new Map<string, { t: number; in: number; out: number }>();
    for (const c of connections) {
      const before = this.last.get(c.id);
      next.set(c.id, { t: now, in: c.bytesIn, out: c.bytesOut });
      if (!before || now <= before.t) continue;
      const seconds = (now - before.t) / 1000;
      rates.set(c.id, { in: Math.max(0, (c.bytesIn - before.in) / seconds), out: Math.max(0, (c.bytesOut - before.out) / seconds) });
    }
    this.last = next;
    return rates;
  }
}

export const SORT_KEYS = ["user", "group", "address", "client", "channel", "since", "in", "out", "rate", "drops"] as const;
export type SortKey = (typeof SORT_KEYS)[number];
export interface ConnectionSort {
  key: SortKey;
  descending: boolean;
}

export function parseSort(key: string | undefined, dir: string | undefined): ConnectionSort {
  const k = (SORT_KEYS as readonly string[]).includes(key ?? "") ? (key as SortKey) : "since";
  return { key: k, descending: dir === undefined ? k === "since" || k === "in" || k === "out" || k === "rate" || k === "drops" : dir === "desc" };
}

/** A new array in the asked order (ties by user, then id, so rows do not jump between ticks). */
export function sortConnections(list: readonly ConnectionView[], sort: ConnectionSort, rates: ReadonlyMap<string, ConnectionRate>): ConnectionView[] {
  const value = (c: ConnectionView): string | number => {
    switch (sort.key) {
      case "user":
        return c.user;
      case "group":
        return c.group;
      case "address":
        return c.address ?? "";
      case "client":
        return c.clientAddress ?? "";
      case "channel":
        return c.channel ?? "";
      case "since":
        return c.connectedSince ?? c.loginAt;
      case "in":
        return c.bytesIn;
      case "out":
        return c.bytesOut;
      case "rate": {
        const r = rates.get(c.id);
        return r ? r.in + r.out : 0;
      }
      case "drops":
        return totalDrops(c);
    }
  };
  const sign = sort.descending ? -1 : 1;
  return [...list].sort((a, b) => {
    const va = value(a);
    const vb = value(b);
    const order = typeof va === "number" && typeof vb === "number" ? va - vb : String(va).localeCompare(String(vb), undefined, { numeric: true });
    return order !== 0 ? sign * order : a.user.localeCompare(b.user) || a.id.localeCompare(b.id);
  });
}

/** Every packet the session's policy dropped (access rules and rate limits). */
export const totalDrops = (c: ConnectionView) => Object.values(c.drops).reduce((n, d) => n + d, 0);
