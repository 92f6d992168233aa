/**
 * Fuzz target for the management API's JSON bodies: the hono app in process (the fixture of
 * test/unit/api), every POST/PUT/PATCH route, arbitrary JSON and raw garbage. The answer is
 * always the error model with a 4xx (or a 2xx for a body that happens to be valid), never a
 * 500, and a refused request changes nothing in the store.
 */
import fc from "fast-check";
import { z } from "zod";
import { newGroupSchema } from "../../../src/api/groups.ts";
import { gatewaySettingsShape } from "../../../src/config/gateway-config.ts";
import { groupPolicySchema } from "../../../src/control/group-policy.ts";
import { newTokenSchema } from "../../../src/control/tokens.ts";
import { newUserSchema } from "../../../src/control/users.ts";
import { apiFixture, type Fixture } from "../../unit/api/fixture.ts";
import { shapedObject } from "./values.ts";
import { check, type FuzzTarget } from "./target.ts";

const keysOf = (s: z.ZodType): string[] => Object.keys((s as unknown as { shape?: object }).shape ?? {});

/** The routes that take a body; `:name` is filled from NAMES. */
const BODY_ROUTES: { method: "POST" | "PUT" | "PATCH"; path: string; keys: string[] }[] = [
  { method: "POST", path: "/api/v1/users", keys: keysOf(newUserSchema) },
  { method: "PUT", path: "/api/v1/users/:name", keys: keysOf(newUserSchema).filter((k) => k !== "name") },
  { method: "PATCH", path: "/api/v1/users/:name", keys: keysOf(newUserSchema).filter((k) => k !== "name") },
  { method: "POST", path: "/api/v1/users/:name/otp", keys: [] },
  { method: "POST", path: "/api/v1/groups", keys: [...keysOf(newGroupSchema), ...keysOf(groupPolicySchema)] },
  { method: "PUT", path: "/api/v1/groups/:name", keys: keysOf(groupPolicySchema) },
  { method: "PATCH", path: "/api/v1/groups/:name", keys: keysOf(groupPolicySchema) },
  { method: "POST", path: "/api/v1/tokens", keys: keysOf(newTokenSchema) },
  { method: "PUT", path: "/api/v1/config", keys: Object.keys(gatewaySettingsShape) },
  { method: "POST", path: "/api/v1/config/check", keys: Object.keys(gatewaySettingsShape) },
];

const pathName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("alice", "staff", "nobody", "bob") },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 20 }).map(encodeURIComponent) },
);

interface ApiRequest {
  method: string;
  path: string;
  /** Raw body text (JSON or not). */
  raw: string;
  contentType: string;
  admin: boolean;
}

const serialise = (v: unknown): string => JSON.stringify(v) ?? "";

const apiRequest: fc.Arbitrary<ApiRequest> = fc
  .record({
    route: fc.constantFrom(...BODY_ROUTES),
    name: pathName,
    body: fc.oneof(
      { weight: 4, arbitrary: fc.constant(undefined) }, // shaped by the route, below
      { weight: 2, arbitrary: fc.json({ maxDepth: 3 }) },
      { weight: 1, arbitrary: fc.anything({ maxDepth: 2 }).map(serialise) },
      { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 80 }) },
      { weight: 1, arbitrary: fc.constantFrom("", "{", "[1,", '{"a":}', "nul", "\u0000", '{"__proto__":{"x":1}}', "1e999", "x".repeat(70 * 1024)) },
    ),
    contentType: fc.oneof({ weight: 8, arbitrary: fc.constantFrom("application/json", "application/json; charset=utf-8", "Application/JSON") }, { weight: 1, arbitrary: fc.constantFrom("text/plain", "", "application/x-www-form-urlencoded") }),
    admin: fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  })
  .chain((r) =>
    (r.body === undefined ? shapedObject(r.route.keys).map(serialise) : fc.constant(r.body)).map((raw) => ({
      method: r.route.method,
      path: r.route.path.replace(":name", r.name),
      raw,
      contentType: r.contentType,
      admin: r.admin,
    })),
  );

/** What a refused request must leave alone. */
function snapshot(f: Fixture): string {
  const s = f.control.store;
  return JSON.stringify([s.listUsers(), s.listGroups(), s.listApiTokens(), s.getMeta("gateway_settings"), s.listAudit(0, 1e6).length, s.getOtp("alice")]);
}

/** A fixture with something for PUT/PATCH to find: a group and a member. */
async function seeded(): Promise<Fixture> {
  const f = apiFixture();
  await f.request("PUT", "/api/v1/groups/staff", { routes: ["198.51.100.0/24"] });
  await f.request("PUT", "/api/v1/users/alice", { groups: ["staff"], password: "pw" });
  return f;
}

/** A fixture reused across runs, replaced now and then so the store stays small. */
function fixturePool() {
  let f: Promise<Fixture> | undefined;
  let uses = 0;
  return () => {
    if (!f || ++uses % 200 === 0) f = seeded();
    return f;
  };
}

export const apiTarget: FuzzTarget = {
  name: "api",
  properties: [
    {
      name: "every body route answers 2xx or a 4xx error model, never a 500; a refusal changes nothing",
      testRuns: 250,
      make: () => {
        const fixture = fixturePool();
        return fc.asyncProperty(apiRequest, async (req) => {
          const f = await fixture();
          const before = snapshot(f);
          const res = await f.request(req.method, req.path, undefined, { raw: req.raw, contentType: req.contentType, token: req.admin ? f.admin : f.reader });
          const what = `${req.method} ${req.path} ${JSON.stringify(req.raw.slice(0, 200))}`;
          check(res.status < 500, () => `${what} answered ${res.status}: ${res.text.slice(0, 300)}`);
          if (res.status >= 400) {
            check(res.status < 500, `${what}: status ${res.status}`);
            const e = res.body?.error;
            check(typeof e?.code === "string" && typeof e?.message === "string" && e.message.length > 0, () => `${what}: ${res.status} without the error model: ${res.text.slice(0, 300)}`);
            check(snapshot(f) === before, () => `${what}: refused with ${e.code} but the store changed`);
          } else {
            check(res.status >= 200 && res.status < 300, `${what}: status ${res.status}`);
            check(res.body !== undefined, () => `${what}: ${res.status} with a non-JSON body`);
          }
        });
      },
    },
  ],
  scaling: [
    {
      name: "PUT /groups, many invalid routes",
      base: 2048,
      make: (n) => {
        const f = apiFixture();
        return { f, raw: JSON.stringify({ routes: Array.from({ length: Math.floor(n / 16) }, (_, i) => `10.0.${i % 256}.1/33`) }) };
      },
      bytes: (x) => x.raw.length,
      run: (x) => x.f.request("PUT", "/api/v1/groups/g", undefined, { raw: x.raw }),
    },
  ],
};
