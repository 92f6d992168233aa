import { FRONT_LIMITS } from "../front/front-limits.ts";

/**
 * How the open-file limit is shared out. Every TLS connection on the tunnel port holds one
 * descriptor, so the limit bounds sessions; the rest is kept for what must never starve: the
 * store, the TUN and UDP sockets, the listeners, and operators reaching the management API.
 */
export interface DescriptorBudget {
  /** The soft open-file limit in force. */
  limit: number;
  /** Descriptors kept for the process itself and for the management API. */
  reserve: number;
  /** Connections still in their TLS handshake or login (not yet a tunnel). */
  unauthenticated: number;
  /** Sessions the gateway admits at once (the session cap's default). */
  sessions: number;
}

/** Store (db, -wal, -shm), lock, TUN and its reader, UDP, listeners, stdio, timers: measured at about 30. */
const PROCESS_RESERVE = 64;
/** Management API connections that still find a descriptor when the tunnel port is full. */
export const MANAGEMENT_RESERVE = 32;
/** At most this many connections in handshake or login, however high the limit. */
const MAX_UNAUTHENTICATED = FRONT_LIMITS.maxUnauthenticated;

export function descriptorBudget(limit: number): DescriptorBudget {
  const reserve = PROCESS_RESERVE + MANAGEMENT_RESERVE;
  const unauthenticated = Math.max(8, Math.min(MAX_UNAUTHENTICATED, Math.floor(limit / 8)));
  return { limit, reserve, unauthenticated, sessions: Math.max(1, limit - reserve - unauthenticated) };
}

/** The smallest open-file limit whose budget admits this many sessions (the inverse of descriptorBudget). */
export function limitForSessions(sessions: number): number {
  let low = 1;
  let high = sessions + PROCESS_RESERVE + MANAGEMENT_RESERVE + MAX_UNAUTHENTICATED;
  while (low < high) {
    const mid = Math.floor((low + high) / 2);
    if (descriptorBudget(mid).sessions >= sessions) high = mid;
    else low = mid + 1;
  }
  return low;
}
