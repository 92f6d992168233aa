import { z } from "zod";

/** ocserv's limit on a user name, in UTF-8 bytes. */
export const MAX_USER_NAME_BYTES = 128;

/** Control characters (C0, DEL, C1), lone surrogates and line/paragraph separators: never in a name. */
const UNPRINTABLE = /[\p{Cc}\p{Cs}\p{Zl}\p{Zp}]/u;

/**
 * User names as ocserv accepts them: any printable UTF-8 ('/', ':', spaces inside and non-ASCII
 * letters included), 1-128 bytes, no white space at either end (the login form trims what is typed).
 * Wherever a name is shown it is escaped (XML, HTML, log lines, URLs); it never goes into a file name.
 */
export const userNameSchema = z.string().superRefine((name, ctx) => {
  const problem = userNameProblem(name);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

export function userNameProblem(name: string): string | undefined {
  if (name.length === 0) return "a user name is not empty";
  if (Buffer.byteLength(name, "utf8") > MAX_USER_NAME_BYTES) return `a user name is at most ${MAX_USER_NAME_BYTES} bytes of UTF-8`;
  if (UNPRINTABLE.test(name)) return "a user name holds no control characters or line breaks";
  if (name.trim() !== name) return "a user name neither starts nor ends with white space";
  return undefined;
}

/** Names that are also safe as file names and in shell scripts without quoting (client certificate files). */
export const plainNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/, "1-64 characters: letters, digits, '.', '_', '@', '-'");

export const groupNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "a group name is 1-64 characters: letters, digits, '.', '_', '-'");
