import { z } from "zod";
import { VERSION } from "../version.ts";
import { errorCodeInfo, ERROR_CODES, errorBodySchema } from "./errors.ts";
import { API_PREFIX } from "./register-routes.ts";
import type { RouteDoc } from "./route.ts";

const COMMON_ERRORS = ["unauthorized", "forbidden", "invalid_json", "invalid_input", "unsupported_media_type", "body_too_large", "internal"];

const schema = (s: z.ZodType, io: "input" | "output") => z.toJSONSchema(s, { io, unrepresentable: "any", target: "draft-2020-12" });

/** The OpenAPI 3.1 document of the route table, generated from the same zod schemas that validate requests. */
export function openApiDocument(routes: readonly RouteDoc[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const doc of routes) {
    const codes = [...new Set([...(doc.body || doc.query ? COMMON_ERRORS : COMMON_ERRORS.filter((c) => !c.startsWith("invalid") && c !== "unsupported_media_type" && c !== "body_too_large")), ...(doc.errors ?? [])])].filter(
      (c) => doc.scope === "admin" || c !== "forbidden",
    );
    const responses: Record<string, unknown> = {};
    for (const r of doc.responses) {
      responses[String(r.status)] = {
        description: r.description,
        ...(r.schema || r.contentType ? { content: { [r.contentType ?? "application/json"]: r.schema ? { schema: schema(r.schema, "output") } : {} } } : {}),
      };
    }
    const byStatus = new Map<number, string[]>();
    for (const code of codes) {
      const status = errorCodeInfo(code)!.status;
      byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
    }
    for (const [status, list] of byStatus) {
      const retry = list.some((c) => errorCodeInfo(c)!.retryAfterSeconds !== undefined);
      responses[String(status)] = {
        description: list.map((c) => `\`${c}\`: ${errorCodeInfo(c)!.description}`).join("; "),
        ...(retry ? { headers: { "Retry-After": { description: "seconds to wait before trying again", schema: { type: "integer", minimum: 1 } } } } : {}),
        content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
      };
    }
    const params = [...doc.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
    if (doc.query) {
      const q = schema(doc.query, "input") as { properties?: Record<string, unknown> };
      // Every query parameter has a default or is optional.
      for (const [name, s] of Object.entries(q.properties ?? {})) params.push({ name, in: "query", required: false, schema: s as never });
    }
    // A route also served at the root is documented there (Prometheus scrapes /metrics).
    const apiPath = doc.alsoAtRoot ? doc.path : `${API_PREFIX}${doc.path}`;
    paths[apiPath] ??= {};
    paths[apiPath]![doc.method] = {
      summary: doc.summary,
      "x-scope": doc.scope,
      description: doc.scope === "admin" ? "Needs a token with scope admin." : "Any valid token (scope read or admin).",
      ...(params.length ? { parameters: params } : {}),
      ...(doc.body ? { requestBody: { required: true, content: { "application/json": { schema: schema(doc.documentedBody ?? doc.body, "input") } } } } : {}),
      responses,
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "gw management API",
      version: VERSION,
      description:
        "Every request needs `Authorization: Bearer <token>` (401 without a valid one, 403 when a read token tries a change). Errors share one body: `{ \"error\": { \"code\", \"message\", \"details\" } }`; validation errors list every problem with its path in details. GET, PUT and DELETE are idempotent; DELETE answers 204 when it removed something and 404 (`*_not_found`) when there was nothing to remove. Bodies are JSON, at most 64 KiB; unknown fields are refused.",
    },
    servers: [{ url: "/" }],
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: { Error: schema(errorBodySchema, "output") },
    },
    "x-error-codes": Object.fromEntries(Object.entries(ERROR_CODES).map(([code, e]) => [code, { status: e.status, description: e.description, ...("retryAfterSeconds" in e ? { retryAfterSeconds: e.retryAfterSeconds } : {}) }])),
    paths,
  };
}
