import type { EventBus, GwEvent } from "../control/events.ts";

/** The last few control-plane events, for the dashboard's first paint (the stream adds the rest live). */
export class RecentEvents {
  private readonly events: GwEvent[] = [];

  constructor(bus: EventBus, private readonly size = 50) {
    bus.subscribe((event) => {
      this.events.push(event);
      if (this.events.length > this.size) this.events.shift();
    });
  }

  /** Newest first. */
  list(): GwEvent[] {
    return [...this.events].reverse();
  }
}

/** One line per event, for people. */
export function describeEvent(e: GwEvent): string {
  switch (e.type) {
    case "auth.success":
      return `${e.user} logged in (group ${e.group}) from ${e.peer}`;
    case "auth.failure":
      return `login failed for ${e.user ?? "(no name)"} from ${e.peer}: ${e.reason}`;
    case "session.up":
      return `${e.user} connected over ${e.channel.toUpperCase()}, address ${e.address}`;
    case "session.down":
      return `${e.user} disconnected (${e.reason})`;
    case "channel.change":
      return `${e.user} switched to ${e.channel.toUpperCase()} (${e.cipher})`;
    case "connection.killed":
      return `${e.actor} disconnected ${e.user}`;
    case "auth.ban":
      return `banned ${e.user ? `${e.user} from ` : ""}${e.ip} after ${e.failures} failures`;
    case "bans.cleared":
      return `${e.actor} lifted ${e.count} ban(s)${e.target ? ` for ${e.target}` : ""}`;
    case "config.updated":
      return `${e.actor} changed the settings${e.restartRequired.length ? ` (restart required: ${e.restartRequired.join(", ")})` : ""}`;
    case "gateway.draining":
      return `${e.actor} started a drain: ${e.sessions} session(s) left, stop by ${new Date(e.deadline).toISOString()}`;
    case "gateway.reloaded":
      return `${e.actor} reloaded certificate and settings${e.restartRequired.length ? ` (restart required: ${e.restartRequired.join(", ")})` : ""}`;
    case "policy.drop":
      return `${e.user}: ${e.drops} packet(s) dropped by policy (rule ${e.rule}), last to ${e.peer}${e.port ? ` port ${e.port}` : ""}`;
    default:
      return `${e.type.replace(".", " ")}: ${e.name} by ${e.actor}`;
  }
}
