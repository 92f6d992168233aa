import type { z } from "zod";

/** One route as openapi.json describes it; each resource file lists its own. */
export interface RouteDoc {
  method: "get" | "post" | "put" | "patch" | "delete";
  /** OpenAPI form, under /api/v1: /users/{name}. */
  path: string;
  summary: string;
  scope: "read" | "admin";
  body?: z.ZodType;
  query?: z.ZodType;
  responses: { status: number; description: string; schema?: z.ZodType; contentType?: string }[];
  /** Error codes beyond the common ones (401, 403, 400 invalid_json/invalid_input, 413, 415). */
  errors?: string[];
}
