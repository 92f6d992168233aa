import { z } from "zod";

/** User and group names: safe in XML, HTTP headers, logs and shell scripts without quoting. */
export const userNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/, "a user name is 1-64 characters: letters, digits, '.', '_', '@', '-'");

export const groupNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "a group name is 1-64 characters: letters, digits, '.', '_', '-'");
