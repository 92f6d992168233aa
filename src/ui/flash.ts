import type { Context } from "hono";
import type { UiEnv } from "./ui-env.ts";

/** The message a change left for the next page (kept server-side in the session), read once. */
export function takeFlash(c: Context<UiEnv>): string | undefined {
  const notice = c.var.session.flash;
  c.var.session.flash = undefined;
  return notice;
}

/** After a change: back to a page (303, so a reload does not repeat it) with a message. */
export function doneTo(c: Context<UiEnv>, path: string, message: string) {
  c.var.session.flash = message;
  return c.redirect(path, 303);
}

export const formField = (body: Record<string, unknown>, name: string) => (typeof body[name] === "string" ? (body[name] as string) : "");
