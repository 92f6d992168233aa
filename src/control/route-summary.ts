import { prefixToMask, type Ipv4Cidr } from "../net/ipv4.ts";

/**
 * Fewer split-include routes with the same effect: duplicates and routes inside another route
 * are dropped, and two halves of one network (10.0.0.0/25 + 10.0.0.128/25) become that network
 * (10.0.0.0/24), repeatedly. Clients pick the most specific route, so a route that overlaps an
 * excluded route is left exactly as written: merging or dropping it could change which of the
 * two wins for some address. The result covers exactly the same addresses, in the order the
 * operator wrote them (a merged route takes the place of its first part): some clients apply
 * only the first 200.
 */
export function summariseRoutes(routes: readonly Ipv4Cidr[], excluded: readonly Ipv4Cidr[] = []): Ipv4Cidr[] {
  const pinned: Ipv4Cidr[] = [];
  const free: Ipv4Cidr[] = [];
  for (const r of routes) (excluded.some((e) => overlaps(r, e)) ? pinned : free).push(r);
  let current = withoutContained(free);
  for (;;) {
    const merged = mergeSiblings(current);
    if (merged.length === current.length) break;
    current = withoutContained(merged);
  }
  return inWrittenOrder([...current, ...dedupe(pinned)], routes);
}

function inWrittenOrder(result: Ipv4Cidr[], written: readonly Ipv4Cidr[]): Ipv4Cidr[] {
  const firstIndex = (r: Ipv4Cidr) => written.findIndex((w) => contains(r, w));
  const keyed = result.map((r) => ({ r, at: firstIndex(r) }));
  return keyed.sort((a, b) => a.at - b.at || byAddress(a.r, b.r)).map((k) => k.r);
}

export function overlaps(a: Ipv4Cidr, b: Ipv4Cidr): boolean {
  const shorter = Math.min(a.prefixLength, b.prefixLength);
  const mask = prefixToMask(shorter);
  return ((a.network & mask) >>> 0) === ((b.network & mask) >>> 0);
}

function contains(outer: Ipv4Cidr, inner: Ipv4Cidr): boolean {
  return outer.prefixLength <= inner.prefixLength && overlaps(outer, inner);
}

/** Sorted by address, wider first: a route is contained iff the last kept route contains it. */
function withoutContained(routes: readonly Ipv4Cidr[]): Ipv4Cidr[] {
  const sorted = [...routes].sort(byAddress);
  const kept: Ipv4Cidr[] = [];
  for (const r of sorted) {
    const last = kept[kept.length - 1];
    if (last && contains(last, r)) continue;
    kept.push(r);
  }
  return kept;
}

/** One pass: each route whose sibling half is also present becomes their parent. Input has no containment. */
function mergeSiblings(sorted: readonly Ipv4Cidr[]): Ipv4Cidr[] {
  const out: Ipv4Cidr[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const a = sorted[i]!;
    const b = sorted[i + 1];
    if (b && a.prefixLength > 0 && a.prefixLength === b.prefixLength) {
      const size = 2 ** (32 - a.prefixLength);
      const parentMask = prefixToMask(a.prefixLength - 1);
      const isLowerHalf = ((a.network & parentMask) >>> 0) === a.network;
      if (isLowerHalf && b.network === a.network + size) {
        out.push({ network: a.network, prefixLength: a.prefixLength - 1 });
        i++;
        continue;
      }
    }
    out.push(a);
  }
  return out;
}

function dedupe(routes: readonly Ipv4Cidr[]): Ipv4Cidr[] {
  const seen = new Set<string>();
  return routes.filter((r) => {
    const key = `${r.network}/${r.prefixLength}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function byAddress(a: Ipv4Cidr, b: Ipv4Cidr): number {
  return a.network - b.network || a.prefixLength - b.prefixLength;
}
