import { compilePolicy, policyHash, type CompiledPolicy, type GroupPolicy } from "./group-policy.ts";

/** Distinct effective policies kept; beyond this the least recently used is forgotten (sessions keep theirs). */
const MAX_KEPT = 256;

/**
 * Hands every session with the same effective policy (same group, same user overrides) one shared,
 * never-mutated CompiledPolicy and hash string, instead of a fresh copy of its routes, DNS lists
 * and rules per login (issue 13: memory per session). Control-plane work, once per login.
 */
export class CompiledPolicies {
  /** Keyed by the policy's JSON text (cheaper than its hash; the same content in the same key order). */
  private readonly byContent = new Map<string, { policy: CompiledPolicy; hash: string }>();

  /** The compiled form of `policy` and its hash (Session.configHash). */
  of(policy: GroupPolicy): { policy: CompiledPolicy; hash: string } {
    const key = JSON.stringify(policy);
    let entry = this.byContent.get(key);
    if (entry) this.byContent.delete(key); // most recently used last, so eviction takes the oldest
    else entry = { policy: compilePolicy(policy), hash: policyHash(policy) };
    this.byContent.set(key, entry);
    if (this.byContent.size > MAX_KEPT) this.byContent.delete(this.byContent.keys().next().value!);
    return entry;
  }
}
