import { z } from "zod";
import { err, ok, type Result } from "../errors.ts";
import { formatIpv4 } from "../net/ipv4.ts";
import { formatIpv6 } from "../net/ipv6.ts";
import type { Actor, AuditLog } from "./audit.ts";
import type { EventBus } from "./events.ts";
import type { Session, SessionRegistry } from "./sessions.ts";

export const connectionViewSchema = z.object({
  id: z.string(),
  user: z.string(),
  group: z.string(),
  /** Client address in the tunnel; null until the first CONNECT. */
  address: z.string().nullable(),
  /** Client IPv6 address in the tunnel; null without --pool6, for IPv4-only clients, and until the first CONNECT. */
  address6: z.string().nullable(),
  state: z.enum(["connected", "disconnected"]),
  clientAddress: z.string().nullable(),
  clientPort: z.number().int().nullable(),
  userAgent: z.string().nullable(),
  hostname: z.string().nullable(),
  loginAt: z.number().int(),
  connectedSince: z.number().int().nullable(),
  channel: z.enum(["cstp", "dtls"]).nullable(),
  cipher: z.string().nullable(),
  mtu: z.number().int().nullable(),
  bytesIn: z.number().int(),
  bytesOut: z.number().int(),
  packetsIn: z.number().int(),
  packetsOut: z.number().int(),
  /** When the client last sent anything (DPD, keepalive or data). */
  lastDpdAt: z.number().int().nullable(),
  /** Packets the session's policy dropped, by reason (empty before the first CONNECT). */
  drops: z.record(z.string(), z.number().int()),
  /** Effective bandwidth limits, bits/s (the policy's, lowered by a quota's throttle); null: none. */
  rateUp: z.number().nullable(),
  rateDown: z.number().nullable(),
});
export type ConnectionView = z.infer<typeof connectionViewSchema>;

export const connectionFilterSchema = z
  .object({
    user: z.string().max(64).optional(),
    group: z.string().max(64).optional(),
    limit: z.coerce.number().int().min(1).max(1000).default(100),
    offset: z.coerce.number().int().min(0).default(0),
  })
  .strict();
export type ConnectionFilter = z.infer<typeof connectionFilterSchema>;

export const connectionPageSchema = z.object({ total: z.number().int(), items: z.array(connectionViewSchema) });

/** Live sessions as operators see them; killing one ends it now (the client is told to go). */
export class ConnectionService {
  constructor(
    private readonly sessions: SessionRegistry,
    private readonly audit: AuditLog,
    private readonly events: EventBus,
  ) {}

  list(filter: ConnectionFilter): z.infer<typeof connectionPageSchema> {
    const all = this.sessions
      .list()
      .filter((s) => (filter.user === undefined || s.user === filter.user) && (filter.group === undefined || s.group === filter.group))
      .sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
    return { total: all.length, items: all.slice(filter.offset, filter.offset + filter.limit).map(connectionView) };
  }

  get(id: string): Result<ConnectionView> {
    const session = this.sessions.findById(id);
    return session ? ok(connectionView(session)) : notFound(id);
  }

  kill(id: string, actor: Actor): Result<void> {
    const session = this.sessions.findById(id);
    if (!session) return notFound(id);
    const before = connectionView(session);
    this.audit.record(actor, "connection.kill", id, before, null);
    this.sessions.end(session, "admin");
    this.events.emit({ type: "connection.killed", session: id, user: session.user, actor });
    return ok(undefined);
  }
}

function notFound<T>(id: string): Result<T> {
  return err("connection_not_found", `no live session ${id}: 'gw connections list' shows them`);
}

export function connectionView(s: Session): ConnectionView {
  const info = s.connection?.info;
  const lastRx = info?.lastRxAt();
  return {
    id: s.id,
    user: s.user,
    group: s.group,
    address: s.address === undefined ? null : formatIpv4(s.address),
    address6: s.address6 === undefined ? null : formatIpv6(s.address6),
    state: info ? "connected" : "disconnected",
    clientAddress: info?.clientAddress ?? null,
    clientPort: info?.clientPort ?? null,
    userAgent: info?.userAgent ?? null,
    hostname: info?.hostname ?? null,
    loginAt: s.createdAt,
    connectedSince: info?.connectedAt ?? null,
    channel: info?.channel ?? null,
    cipher: info?.cipher ?? null,
    mtu: info?.mtu ?? null,
    bytesIn: s.traffic.bytesIn,
    bytesOut: s.traffic.bytesOut,
    packetsIn: s.traffic.packetsIn,
    packetsOut: s.traffic.packetsOut,
    lastDpdAt: lastRx === undefined || !Number.isFinite(lastRx) ? null : Math.round(lastRx),
    drops: s.firewall?.drops() ?? {},
    rateUp: s.firewall?.rateUp ?? null,
    rateDown: s.firewall?.rateDown ?? null,
  };
}
