import { zValidator } from "@hono/zod-validator";
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { z } from "zod";
import { issueDetails, summarize } from "../control/zod-errors.ts";
import { problem } from "./errors.ts";

export const MAX_BODY_BYTES = 64 * 1024;

/** A JSON body validated by its zod schema; failure = 400 invalid_input with every path ("invalid <what>: …"). */
export const jsonBody = <S extends z.ZodType>(schema: S, what = "body") =>
  zValidator("json", schema, (result, c) => {
    if (!result.success) {
      const details = issueDetails(result.error.issues);
      return problem(c, "invalid_input", `invalid ${what}: ${summarize(details)}`, details);
    }
  });

export const queryOf = <S extends z.ZodType>(schema: S) =>
  zValidator("query", schema, (result, c) => {
    if (!result.success) {
      const details = issueDetails(result.error.issues);
      return problem(c, "invalid_input", `invalid query: ${summarize(details)}`, details);
    }
  });

/** Bodies are JSON of at most MAX_BODY_BYTES: 413 and 415 before anything reads them. */
export const jsonEnvelope: MiddlewareHandler[] = [
  bodyLimit({ maxSize: MAX_BODY_BYTES, onError: (c) => problem(c, "body_too_large", `the body is larger than ${MAX_BODY_BYTES} bytes`) }),
  async (c, next) => {
    const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== "application/json") return problem(c, "unsupported_media_type", "send the body as Content-Type: application/json");
    await next();
  },
];
