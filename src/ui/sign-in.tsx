/** @jsxImportSource hono/jsx */
import { Hono, type Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { z } from "zod";
import { Page } from "./layout.tsx";
import { requireSession } from "./session-guard.ts";
import { SESSION_COOKIE, type UiEnv } from "./ui-env.ts";
import type { UiSession } from "./ui-sessions.ts";

const passwordForm = z.object({ name: z.string().max(64), password: z.string().max(1024), code: z.string().max(16).optional() });
const tokenForm = z.object({ token: z.string().min(1).max(200) });

function SignInPage(props: { error?: string; name?: string; askCode?: boolean }) {
  return (
    <Page title="Sign in">
      <div class="signin">
        {props.error && (
          <p class="notice" role="alert">
            {props.error}
          </p>
        )}
        <section class="panel">
          <h2>Admin account</h2>
          <form class="stack" method="post" action="/ui/sign-in">
            <label>
              Name
              <input name="name" autocomplete="username" required value={props.name ?? ""} autofocus />
            </label>
            <label>
              Password
              <input name="password" type="password" autocomplete="current-password" required />
            </label>
            <label>
              One-time code {props.askCode ? "" : "(if enrolled)"}
              <input name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*" required={props.askCode} />
            </label>
            <button type="submit">Sign in</button>
          </form>
        </section>
        <section class="panel">
          <h2>API token</h2>
          <form class="stack" method="post" action="/ui/sign-in/token">
            <label>
              Token (scope admin or read)
              <input name="token" type="password" autocomplete="off" required />
            </label>
            <button type="submit" class="secondary">
              Sign in with token
            </button>
          </form>
        </section>
      </div>
    </Page>
  );
}

/** A cross-site form post never signs anyone in (login CSRF). Browsers send Sec-Fetch-Site; Origin as fallback. */
function crossSite(request: Request): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site) return site !== "same-origin" && site !== "none";
  const origin = request.headers.get("origin");
  if (!origin) return false;
  return origin !== new URL(request.url).origin;
}

function startSession(c: Context<UiEnv>, session: UiSession) {
  setCookie(c, SESSION_COOKIE, session.id, { secure: true, httpOnly: true, sameSite: "Strict", path: "/ui" });
  return c.redirect("/ui", 303);
}

/** Sign in (admin name + password [+ code], or an API token) and sign out. */
export const signInRoutes = new Hono<UiEnv>()
  .get("/sign-in", (c) => c.html(<SignInPage />))
  .post("/sign-in", async (c) => {
    if (crossSite(c.req.raw)) return c.text("cross-site sign-in refused", 403);
    const form = passwordForm.safeParse(await c.req.parseBody());
    if (!form.success) return c.html(<SignInPage error="Enter a name and a password." />);
    const { name, password, code } = form.data;
    const result = await c.var.control.admins.signIn({ name, password, code, ip: c.env?.address || "unknown" });
    if (!result.ok) {
      // 200 with the message: browsers log any 4xx page load as a console error.
      const message = result.error.code === "otp_required" || result.error.code === "too_many_attempts" ? result.error.message : "Wrong name, password or code.";
      return c.html(<SignInPage error={message} name={name} askCode={result.error.code === "otp_required"} />);
    }
    // A fresh session id at every sign-in (no fixation); an old cookie's session ends.
    const old = getCookie(c, SESSION_COOKIE);
    if (old) c.var.sessions.close(old);
    return startSession(c, c.var.sessions.open({ kind: "admin", name: result.value.name, role: result.value.role }));
  })
  .post("/sign-in/token", async (c) => {
    if (crossSite(c.req.raw)) return c.text("cross-site sign-in refused", 403);
    const form = tokenForm.safeParse(await c.req.parseBody());
    const principal = form.success ? c.var.control.tokens.authenticate(form.data.token.trim()) : undefined;
    if (!form.success || !principal) return c.html(<SignInPage error="That token is unknown, revoked or expired." />);
    const old = getCookie(c, SESSION_COOKIE);
    if (old) c.var.sessions.close(old);
    return startSession(c, c.var.sessions.open({ kind: "token", name: principal.name, role: principal.scope }, form.data.token.trim()));
  })
  .post("/sign-out", requireSession, (c) => {
    c.var.sessions.close(c.var.session.id);
    deleteCookie(c, SESSION_COOKIE, { path: "/ui", secure: true });
    return c.redirect("/ui/sign-in", 303);
  });
