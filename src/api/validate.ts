import { zValidator } from "@hono/zod-validator";
import type { z } from "zod";
import { issueDetails, summarize } from "../control/zod-errors.ts";
import { problem } from "./errors.ts";

/** A JSON body validated by its zod schema; failure = 400 invalid_input with every path. */
export const jsonBody = <S extends z.ZodType>(schema: S) =>
  zValidator("json", schema, (result, c) => {
    if (!result.success) {
      const details = issueDetails(result.error.issues);
      return problem(c, "invalid_input", `invalid body: ${summarize(details)}`, details);
    }
  });

export const queryOf = <S extends z.ZodType>(schema: S) =>
  zValidator("query", schema, (result, c) => {
    if (!result.success) {
      const details = issueDetails(result.error.issues);
      return problem(c, "invalid_input", `invalid query: ${summarize(details)}`, details);
    }
  });
