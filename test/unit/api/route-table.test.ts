import { describe, expect, test } from "bun:test";
import { z } from "zod";
import { route } from "../../../src/api/route.ts";
import { API_PREFIX, servedPaths } from "../../../src/api/register-routes.ts";
import { apiRoutes } from "../../../src/api/route-table.ts";
import { apiFixture } from "./fixture.ts";

/** A row's path with every {param} filled by a dummy value. */
const concrete = (path: string) => path.replace(/\{\w+\}/g, "dummy");

describe("the route table", () => {
  test("every row is in openapi.json, at its path and method, with its x-scope", async () => {
    const f = apiFixture();
    const doc = (await f.request("GET", `${API_PREFIX}/openapi.json`, undefined, { token: f.reader })).body;
    const documented = Object.entries(doc.paths as Record<string, Record<string, { "x-scope": string }>>).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => `${method} ${path} ${op["x-scope"]}`),
    );
    const rows = apiRoutes.map((r) => `${r.method} ${r.alsoAtRoot ? r.path : `${API_PREFIX}${r.path}`} ${r.scope}`);
    expect(documented.sort()).toEqual(rows.sort());
  });

  test("a read token is refused (403) on every admin row, wherever it is served, and nothing changes", async () => {
    const f = apiFixture();
    const admin = apiRoutes.filter((r) => r.scope === "admin");
    expect(admin.length).toBeGreaterThan(10);
    for (const r of admin) {
      for (const path of servedPaths(r)) {
        const res = await f.request(r.method.toUpperCase(), concrete(path), r.body ? {} : undefined, { token: f.reader });
        expect({ route: `${r.method} ${path}`, status: res.status, code: res.body?.error?.code }).toEqual({ route: `${r.method} ${path}`, status: 403, code: "forbidden" });
      }
    }
    expect(f.control.audit.list()).toEqual([]);
    expect(f.events).toEqual([]);
  });

  test("every changing route needs admin, except the declared dry run", () => {
    const changingButRead = apiRoutes.filter((r) => r.method !== "get" && r.scope !== "admin").map((r) => `${r.method} ${r.path}`);
    expect(changingButRead).toEqual(["post /config/check"]);
  });

  test("a read token may call the dry run (scope comes from the row, not from the method)", async () => {
    const f = apiFixture();
    const res = await f.request("POST", `${API_PREFIX}/config/check`, { port: 0 }, { token: f.reader });
    expect(res.status).toBe(200);
    expect(res.body.valid).toBe(false);
    expect(f.control.audit.list()).toEqual([]);
  });
});

/**
 * Type tests: never run, checked by `npx tsc --noEmit -p .`, which fails when a line marked
 * @ts-expect-error compiles (a route declared without its scope or its openapi data, say).
 */
export function routeDeclarationsThatMustNotCompile() {
  const responses = [{ status: 204, description: "gone" }] as const;
  const handler = () => undefined;
  return [
    // @ts-expect-error: scope is required
    route({ method: "delete", path: "/things/{id}", summary: "Delete a thing", responses, handler }),
    // @ts-expect-error: summary is required
    route({ method: "delete", path: "/things/{id}", scope: "admin", responses, handler }),
    // @ts-expect-error: at least one response is required
    route({ method: "delete", path: "/things/{id}", scope: "admin", summary: "Delete a thing", responses: [], handler }),
    // @ts-expect-error: the success answer's status is 200, 201 or 204
    route({ method: "delete", path: "/things/{id}", scope: "admin", summary: "Delete a thing", responses: [{ status: 404, description: "gone" }], handler }),
    // @ts-expect-error: the error codes are the API's own
    route({ method: "delete", path: "/things/{id}", scope: "admin", summary: "Delete a thing", responses, errors: ["thing_lost"], handler }),
    // @ts-expect-error: the handler sees only the path's params
    route({ method: "get", path: "/things/{id}", scope: "read", summary: "A thing", responses: [{ status: 200, description: "it" }], handler: ({ params }) => params.name }),
    route({
      method: "post",
      path: "/things",
      scope: "admin",
      summary: "Make a thing",
      body: z.object({ size: z.number() }),
      responses: [{ status: 201, description: "made" }],
      // @ts-expect-error: the body is typed from its schema
      handler: ({ body }) => body.colour,
    }),
  ];
}
