import { z } from "zod";

/**
 * Typed events of the control plane, as they go out on the SSE stream (GET /api/v1/events).
 * `id` rises by one per event within one server run; `at` is milliseconds since the epoch.
 */
const base = { id: z.number().int(), at: z.number().int() };

export const gwEventSchema = z.discriminatedUnion("type", [
  z.object({ ...base, type: z.literal("auth.success"), user: z.string(), group: z.string(), session: z.string(), peer: z.string() }),
  z.object({ ...base, type: z.literal("auth.failure"), user: z.string().nullable(), reason: z.string(), peer: z.string() }),
  z.object({ ...base, type: z.literal("session.up"), session: z.string(), user: z.string(), group: z.string(), address: z.string(), channel: z.enum(["cstp", "dtls"]) }),
  z.object({ ...base, type: z.literal("session.down"), session: z.string(), user: z.string(), group: z.string(), reason: z.string() }),
  z.object({ ...base, type: z.literal("channel.change"), session: z.string(), user: z.string(), channel: z.enum(["cstp", "dtls"]), cipher: z.string() }),
  z.object({ ...base, type: z.enum(["user.created", "user.updated", "user.deleted"]), name: z.string(), actor: z.string() }),
  z.object({ ...base, type: z.enum(["group.created", "group.updated", "group.deleted"]), name: z.string(), actor: z.string() }),
  z.object({ ...base, type: z.enum(["token.created", "token.revoked"]), name: z.string(), actor: z.string() }),
  z.object({ ...base, type: z.literal("config.updated"), actor: z.string(), restartRequired: z.array(z.string()) }),
  z.object({ ...base, type: z.literal("connection.killed"), session: z.string(), user: z.string(), actor: z.string() }),
  z.object({ ...base, type: z.literal("auth.ban"), ip: z.string(), user: z.string().nullable(), failures: z.number().int(), until: z.number().int() }),
  z.object({ ...base, type: z.literal("bans.cleared"), target: z.string().nullable(), count: z.number().int(), actor: z.string() }),
  z.object({ ...base, type: z.literal("gateway.draining"), actor: z.string(), deadline: z.number().int(), sessions: z.number().int() }),
  /** A session's packets were dropped by its policy: at most one event per session per second; `drops` counts those it stands for. */
  z.object({
    ...base,
    type: z.literal("policy.drop"),
    session: z.string(),
    user: z.string(),
    group: z.string(),
    /** The deciding group rule's index, or user_rule, no_allow, outside_routes, client_to_client. */
    rule: z.union([z.number().int(), z.string()]),
    peer: z.string(),
    protocol: z.number().int(),
    port: z.number().int(),
    drops: z.number().int(),
  }),
  z.object({ ...base, type: z.literal("gateway.reloaded"), actor: z.string(), applied: z.array(z.string()), restartRequired: z.array(z.string()) }),
]);

export type GwEvent = z.infer<typeof gwEventSchema>;
export type GwEventType = GwEvent["type"];
/** An event as emitted: the bus stamps id and at. */
export type NewGwEvent = GwEvent extends infer E ? (E extends GwEvent ? Omit<E, "id" | "at"> : never) : never;

export type EventListener = (event: GwEvent) => void;

/**
 * In-process publish/subscribe. Listeners run synchronously and must not throw or block: the
 * SSE stream queues and drops, it never makes the emitter wait.
 */
export class EventBus {
  private readonly listeners = new Set<EventListener>();
  private nextId = 1;

  constructor(private readonly now: () => number) {}

  emit(event: NewGwEvent): void {
    const stamped = { ...event, id: this.nextId++, at: this.now() } as GwEvent;
    for (const listener of this.listeners) {
      try {
        listener(stamped);
      } catch {
        // one broken subscriber must not stop the others or the emitter
      }
    }
  }

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get subscriberCount(): number {
    return this.listeners.size;
  }
}
