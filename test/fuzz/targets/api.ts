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
import { newUserSchema, userDocumentSchema } from "../../../src/control/users.ts";
import { userPatchSchema } from "../../../src/api/users.ts";
import { apiFixture, type Fixture } from "../../unit/api/fixture.ts";
import { plausibleValue, shapedObject } from "./values.ts";
import { check, type FuzzTarget } from "./target.ts";

const keysOf = (s: z.ZodType): string[] => Object.keys((s as unknown as { shape?: object }).shape ?? {});

/** The routes that take a body (`:name` is filled from pathName), with a valid example each. */
const BODY_ROUTES: { method: "POST" | "PUT" | "PATCH"; path: string; keys: string[]; example: Record<string, unknown> }[] = [
  {
    method: "POST",
    path: "/api/v1/users",
    keys: keysOf(newUserSchema),
    example: { name: "bob", groups: ["staff"], password: "pw", staticAddress: "10.10.0.50", routes: ["192.0.2.0/24"], disabled: false },
  },
  { method: "PUT", path: "/api/v1/users/:name", keys: keysOf(userDocumentSchema), example: { groups: ["staff"], password: "pw", routes: ["192.0.2.0/24"] } },
  { method: "PATCH", path: "/api/v1/users/:name", keys: keysOf(userPatchSchema), example: { disabled: true, routes: ["192.0.2.0/24"], staticAddress: null } },
  { method: "POST", path: "/api/v1/users/:name/otp", keys: [], example: {} },
  {
    method: "POST",
    path: "/api/v1/groups",
    keys: keysOf(newGroupSchema),
    example: { name: "ops", policy: { routes: ["198.51.100.0/24"], dns: ["198.51.100.53"], auth: "password+otp", mtu: 1400 } },
  },
  {
    method: "PUT",
    path: "/api/v1/groups/:name",
    keys: keysOf(groupPolicySchema),
    example: { routes: ["198.51.100.0/24"], excludeRoutes: ["198.51.100.128/25"], dns: ["198.51.100.53"], defaultDomain: "example.com", mtu: 1400, dpdSeconds: 30, auth: "password", maxSessionsPerUser: 3 },
  },
  { method: "PATCH", path: "/api/v1/groups/:name", keys: keysOf(groupPolicySchema), example: { mtu: 1300, dns: [] } },
  { method: "POST", path: "/api/v1/tokens", keys: keysOf(newTokenSchema), example: { name: "ci", scope: "read", expiresAt: 4102444800000 } },
  { method: "PUT", path: "/api/v1/config", keys: Object.keys(gatewaySettingsShape), example: { port: 443, mtu: 1400, dpd: 30, pool: "10.10.0.0/24", apiListen: "0.0.0.0:8443" } },
  { method: "POST", path: "/api/v1/config/check", keys: Object.keys(gatewaySettingsShape), example: { port: 443, mtu: 1300, tunName: "gw1" } },
];

/** A route's valid example with up to two fields replaced, removed or added: reaches the handlers, not only the schema. */
const editedExample = (route: (typeof BODY_ROUTES)[number]) =>
  fc
    .array(fc.tuple(fc.constantFrom(...route.keys, "extra"), fc.oneof(plausibleValue, fc.constant(undefined))), { maxLength: 2 })
    .map((edits) => {
      const body: Record<string, unknown> = { ...route.example };
      for (const [k, v] of edits) {
        if (v === undefined) delete body[k];
        else body[k] = v;
      }
      return body;
    });

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
      { weight: 6, arbitrary: fc.constant(undefined) }, // shaped by the route, below
      { weight: 2, arbitrary: fc.json({ maxDepth: 3 }) },
      { weight: 1, arbitrary: fc.anything({ maxDepth: 2 }).map(serialise) },
      { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 80 }) },
      { weight: 1, arbitrary: fc.constantFrom("", "{", "[1,", '{"a":}', "nul", "\u0000", '{"__proto__":{"x":1}}', "1e999", "x".repeat(70 * 1024)) },
    ),
    contentType: fc.oneof({ weight: 8, arbitrary: fc.constantFrom("application/json", "application/json; charset=utf-8", "Application/JSON") }, { weight: 1, arbitrary: fc.constantFrom("text/plain", "", "application/x-www-form-urlencoded") }),
    admin: fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  })
  .chain((r) =>
    (r.body === undefined ? fc.oneof({ weight: 2, arbitrary: editedExample(r.route) }, { weight: 1, arbitrary: shapedObject(r.route.keys) }).map(serialise) : fc.constant(r.body)).map((raw) => ({
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
      // Every unknown field is one problem in the answer's details: the answer grows with the body.
      name: "PUT /groups, many unknown fields",
      base: 2048,
      make: (n) => {
        const f = apiFixture();
        return { f, raw: JSON.stringify(Object.fromEntries(Array.from({ length: Math.floor(n / 12) }, (_, i) => [`k${String(i).padStart(6, "0")}`, 1]))) };
      },
      bytes: (x) => x.raw.length,
      run: (x) => x.f.request("PUT", "/api/v1/groups/g", undefined, { raw: x.raw }),
    },
    {
      name: "PUT /groups, 200 invalid routes of growing length",
      base: 2048,
      make: (n) => {
        const f = apiFixture();
        const pad = "0".repeat(Math.max(1, Math.floor(n / 200) - 12));
        return { f, raw: JSON.stringify({ routes: Array.from({ length: 200 }, (_, i) => `10.0.${i}.${pad}/33`) }) };
      },
      bytes: (x) => x.raw.length,
      run: (x) => x.f.request("PUT", "/api/v1/groups/g", undefined, { raw: x.raw }),
    },
  ],
};
