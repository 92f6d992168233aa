import { z } from "zod";
import { auditEntrySchema } from "../control/audit.ts";
import { route } from "./route.ts";

export const auditQuerySchema = z
  .object({
    after: z.coerce.number().int().min(0).default(0).describe("entries with a larger id (for paging: the last id seen)"),
    limit: z.coerce.number().int().min(1).max(1000).default(100),
    order: z.enum(["oldest", "newest"]).default("oldest").describe("oldest first (paging forward with after) or the newest first"),
  })
  .strict();

export const auditRoutes = [
  route({
    method: "get",
    path: "/audit",
    summary: "The persisted log of every change made through the API or the CLI: who (token name or local-cli), what, when, before/after",
    scope: "read",
    query: auditQuerySchema,
    responses: [{ status: 200, description: "entries, oldest first unless order=newest", schema: z.array(auditEntrySchema) }],
    handler: ({ control, query }) => control.audit.list(query.after, query.limit, query.order),
  }),
];
