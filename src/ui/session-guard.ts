import type { MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import type { ControlPlane } from "../control/control-plane.ts";
import { SESSION_COOKIE, type UiEnv } from "./ui-env.ts";
import { csrfMatches, type UiSession } from "./ui-sessions.ts";

const isChange = (method: string) => method !== "GET" && method !== "HEAD";
/** Signing out is a change every role may make. */
const SIGN_OUT = "/ui/sign-out";

/**
 * Every page but sign-in and the assets: a live session (idle and absolute expiry), the
 * principal still valid (admin not deleted, token not revoked; role re-read each request), and
 * for changes the session's CSRF token (hidden field or X-CSRF-Token header) and role admin.
 */
export const requireSession: MiddlewareHandler<UiEnv> = async (c, next) => {
  const sessions = c.var.sessions;
  const session = sessions.touch(getCookie(c, SESSION_COOKIE));
  if (!session || !refreshPrincipal(c.var.control, session)) {
    if (session) sessions.close(session.id);
    if (isChange(c.req.method)) return c.text("Your session has ended: sign in again.", 401);
    if (c.req.header("hx-request")) {
      c.header("HX-Redirect", "/ui/sign-in");
      return c.body(null, 401);
    }
    return c.redirect("/ui/sign-in", 303);
  }
  if (isChange(c.req.method)) {
    const sent = c.req.header("x-csrf-token") ?? (await formField(c.req.raw.clone(), "_csrf"));
    if (!csrfMatches(session, sent)) return c.text("This form is out of date (missing or wrong CSRF token): reload the page and try again.", 403);
    if (session.principal.role !== "admin" && c.req.path !== SIGN_OUT) {
      return c.text(`${session.principal.name} is a read-only account: changes need role admin.`, 403);
    }
  }
  c.set("session", session);
  await next();
};

/** Re-reads the role; false when the admin or token behind the session is gone. */
function refreshPrincipal(control: ControlPlane, session: UiSession): boolean {
  const p = session.principal;
  if (p.kind === "admin") {
    const admin = control.admins.get(p.name);
    if (!admin.ok) return false;
    p.role = admin.value.role;
    return true;
  }
  const token = session.tokenSecret ? control.tokens.authenticate(session.tokenSecret) : undefined;
  if (!token || token.name !== p.name) return false;
  p.role = token.scope;
  return true;
}

async function formField(request: Request, name: string): Promise<string | undefined> {
  const type = request.headers.get("content-type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded") && !type.startsWith("multipart/form-data")) return undefined;
  try {
    const value = (await request.formData()).get(name);
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The audit log's actor for a UI change: "admin:alice" or "token:ci". */
export function actorOf(session: UiSession): string {
  return `${session.principal.kind}:${session.principal.name}`;
}
