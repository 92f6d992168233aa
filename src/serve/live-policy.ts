import { compilePolicy, emptyPolicy } from "../control/group-policy.ts";
import { effectivePolicy, type DefaultRates } from "../control/effective-policy.ts";
import type { EventBus } from "../control/events.ts";
import type { GroupService } from "../control/groups.ts";
import type { SessionRegistry } from "../control/sessions.ts";
import type { UserService } from "../control/users.ts";
import { firewallSettingsOf } from "../firewall/policy-fields.ts";
import type { PolicySource } from "../net/session-firewalls.ts";
import type { Store } from "../store/store.ts";

/** Reads a live session's policy again from the store, as its login did (group, the user's additions, default rates). */
export function storedPolicySource(store: Store, users: UserService, groups: GroupService, defaults: () => DefaultRates): PolicySource {
  const groupPolicy = (name: string) => (name ? groups.policyOf(name) : { ok: true as const, value: emptyPolicy });
  return {
    policyOf(session) {
      const user = store.getUser(session.user);
      const group = groupPolicy(session.group);
      if (!user || !group.ok) return undefined;
      return compilePolicy(effectivePolicy(group.value, users.overridesOf(user), defaults()));
    },
    groupRuleCount(name) {
      const group = groupPolicy(name);
      return group.ok ? firewallSettingsOf(group.value).rules.length : 0;
    },
  };
}

/**
 * Changes announced on the event bus reach live sessions at once (well within the second the
 * issue allows): a group change its members, settings (default rates) and reloads all. A user's
 * change comes through the control plane's onUserPolicyChanged (ControlPlaneDeps.reapplyPolicy).
 */
export function reapplyOnChange(events: EventBus, sessions: SessionRegistry): () => void {
  return events.subscribe((e) => {
    switch (e.type) {
      case "group.created":
      case "group.updated":
      case "group.deleted":
        sessions.reapplyPolicy((s) => s.group === e.name);
        return;
      case "config.updated":
      case "gateway.reloaded":
        sessions.reapplyPolicy();
        return;
    }
  });
}
