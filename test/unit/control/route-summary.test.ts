import { describe, expect, test } from "bun:test";
import { summariseRoutes } from "../../../src/control/route-summary.ts";
import { formatCidr, parseCidr, type Ipv4Cidr } from "../../../src/net/ipv4.ts";
import { compilePolicy, policyWarnings } from "../../../src/control/group-policy.ts";

const cidrs = (...texts: string[]): Ipv4Cidr[] => texts.map((t) => {
  const r = parseCidr(t);
  if (!r.ok) throw new Error(t);
  return r.value;
});
const summary = (routes: string[], excluded: string[] = []) => summariseRoutes(cidrs(...routes), cidrs(...excluded)).map(formatCidr);

describe("summariseRoutes", () => {
  test("two halves become their network", () => {
    expect(summary(["10.0.0.0/25", "10.0.0.128/25"])).toEqual(["10.0.0.0/24"]);
  });

  test("merging repeats up the tree: four quarters become one /22", () => {
    expect(summary(["10.0.3.0/24", "10.0.1.0/24", "10.0.0.0/24", "10.0.2.0/24"])).toEqual(["10.0.0.0/22"]);
  });

  test("adjacent networks that are not halves of one network stay apart, in the order written", () => {
    expect(summary(["10.0.2.0/24", "10.0.1.0/24"])).toEqual(["10.0.2.0/24", "10.0.1.0/24"]);
  });

  test("routes inside another route and duplicates are dropped", () => {
    expect(summary(["192.0.2.0/24", "10.0.0.0/16", "10.0.5.0/24", "10.0.0.0/16", "10.0.9.9/32"])).toEqual(["192.0.2.0/24", "10.0.0.0/16"]);
  });

  test("a contained route that overlaps an excluded route is kept: it is more specific than the exclusion and wins there", () => {
    expect(summary(["10.0.0.0/16", "10.0.5.7/32"], ["10.0.5.0/24"])).toEqual(["10.0.0.0/16", "10.0.5.7/32"]);
  });

  test("halves that overlap an excluded route are not merged (the merged route could lose to the exclusion)", () => {
    expect(summary(["10.0.0.0/25", "10.0.0.128/25"], ["10.0.0.0/24"])).toEqual(["10.0.0.0/25", "10.0.0.128/25"]);
  });

  test("routes away from the exclusions are still summarised", () => {
    expect(summary(["10.0.0.0/25", "10.0.0.128/25", "10.9.0.0/24"], ["10.9.0.64/26"])).toEqual(["10.0.0.0/24", "10.9.0.0/24"]);
  });

  test("compilePolicy sends the summary; 0.0.0.0/1 + 128.0.0.0/1 is the whole space", () => {
    expect(compilePolicy({ routes: ["0.0.0.0/1", "128.0.0.0/1"], excludeRoutes: [], dns: [] }).routes.map(formatCidr)).toEqual(["0.0.0.0/0"]);
  });
});

describe("policyWarnings", () => {
  const routes = (n: number, step: number) => Array.from({ length: n }, (_, i) => `10.${Math.floor((i * step) / 256)}.${(i * step) % 256}.0/24`);

  test("past 200 routes after summarising: a warning naming the count", () => {
    const warnings = policyWarnings({ routes: routes(201, 2), excludeRoutes: [] });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("201 routes");
  });

  test("200 routes, or 400 that summarise to 200, warn of nothing", () => {
    expect(policyWarnings({ routes: routes(200, 2), excludeRoutes: [] })).toEqual([]);
    expect(policyWarnings({ routes: routes(400, 1), excludeRoutes: [] })).toEqual([]);
  });
});
