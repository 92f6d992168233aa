import { describe, expect, test } from "bun:test";
import { err } from "../../../src/errors.ts";
import type { PasswordHasher } from "../../../src/runtime/password-hasher.ts";
import { apiFixture, fakeHasher } from "./fixture.ts";

/** A hasher that refuses every hash with `code`, as the worker pool does in a login storm. */
const refusing = (code: string): PasswordHasher => ({ hash: async () => err(code, `refused: ${code}`), verify: fakeHasher.verify });

describe("API routes that hash a password, when the hasher refuses", () => {
  test("a busy hasher: 503 server_busy with Retry-After, and nothing was created", async () => {
    const f = apiFixture({ hasher: refusing("server_busy") });
    const r = await f.request("POST", "/api/v1/users", { name: "alice", password: "s3cret" });
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe("server_busy");
    expect(r.headers.get("retry-after")).toBe("2");
    expect((await f.request("GET", "/api/v1/users")).body).toEqual([]);
  });

  test("every 503 code carries its Retry-After; other errors carry none", async () => {
    for (const [code, seconds] of [["server_busy", "2"], ["worker_failed", "1"], ["worker_pool_closed", "5"]] as const) {
      const f = apiFixture({ hasher: refusing(code) });
      const r = await f.request("POST", "/api/v1/admins", { name: "ops", role: "admin", password: "long-enough-secret" });
      expect([r.status, r.body.error.code, r.headers.get("retry-after")]).toEqual([503, code, seconds]);
    }
    const f = apiFixture();
    const missing = await f.request("GET", "/api/v1/users/nobody");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("retry-after")).toBeNull();
  });

  test("openapi.json lists the hashing errors on the routes that hash, with the Retry-After header", async () => {
    const f = apiFixture();
    const doc = (await f.request("GET", "/api/v1/openapi.json")).body;
    for (const [path, method] of [["/api/v1/users", "post"], ["/api/v1/users/{name}", "put"], ["/api/v1/users/{name}", "patch"], ["/api/v1/admins", "post"], ["/api/v1/admins/{name}/password", "put"]]) {
      const busy = doc.paths[path][method].responses["503"];
      expect(busy.description).toContain("`server_busy`");
      expect(busy.headers["Retry-After"].schema.type).toBe("integer");
      expect(doc.paths[path][method].responses["500"].description).toContain("`password_hash_failed`");
    }
    expect(doc.paths["/api/v1/users/{name}"].get.responses["503"]).toBeUndefined();
    expect(doc["x-error-codes"].server_busy.retryAfterSeconds).toBe(2);
  });
});
