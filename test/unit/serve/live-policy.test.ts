import { describe, expect, test } from "bun:test";
import { EventBus } from "../../../src/control/events.ts";
import { SessionRegistry, type Session } from "../../../src/control/sessions.ts";
import { reapplyOnChange } from "../../../src/serve/live-policy.ts";

describe("policy changes reach live sessions", () => {
  test("a group change re-applies its members' sessions, settings and reloads every session; user changes come another way", () => {
    const sessions = new SessionRegistry(60_000, () => 0);
    const events = new EventBus(() => 0);
    const policy = { routes: [], excludeRoutes: [], dns: [] };
    const alice = sessions.create({ user: "alice", group: "staff", policy, configHash: "" }).session;
    const bob = sessions.create({ user: "bob", group: "ops", policy, configHash: "" }).session;
    const picked: string[][] = [];
    sessions.enforcePoliciesWith({
      reapply: (pick) => {
        const chosen = [alice, bob].filter(pick).map((s: Session) => s.user);
        picked.push(chosen);
        return chosen.length;
      },
      limitRates: () => {},
    });
    const stop = reapplyOnChange(events, sessions);
    events.emit({ type: "group.updated", name: "staff", actor: "t" });
    events.emit({ type: "user.updated", name: "bob", actor: "t" });
    events.emit({ type: "config.updated", actor: "t", restartRequired: [] });
    events.emit({ type: "gateway.reloaded", actor: "t", applied: [], restartRequired: [] });
    events.emit({ type: "token.created", name: "x", actor: "t" });
    expect(picked).toEqual([["alice"], ["alice", "bob"], ["alice", "bob"]]);
    stop();
    events.emit({ type: "group.updated", name: "ops", actor: "t" });
    expect(picked).toHaveLength(3);
  });

  test("without a data plane (the CLI on a data directory) re-applying does nothing and says so", () => {
    const sessions = new SessionRegistry(60_000, () => 0);
    expect(sessions.reapplyPolicy()).toBe(0);
  });
});
