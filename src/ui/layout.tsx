/** @jsxImportSource hono/jsx */
import { raw } from "hono/html";
import type { Child } from "hono/jsx";
import { assets } from "./assets.ts";
import type { UiSession } from "./ui-sessions.ts";

/** htmx settings that keep it inside the Content-Security-Policy: no injected <style>, no eval, no inline scripts. */
const HTMX_CONFIG = JSON.stringify({ includeIndicatorStyles: false, allowEval: false, allowScriptTags: false, selfRequestsOnly: true });

const NAV = [
  ["/ui", "Dashboard"],
  ["/ui/connections", "Connections"],
  ["/ui/users", "Users"],
  ["/ui/groups", "Groups"],
  ["/ui/tokens", "Tokens"],
  ["/ui/bans", "Bans"],
  ["/ui/admins", "Admins"],
  ["/ui/settings", "Settings"],
  ["/ui/audit", "Audit"],
] as const;

export interface PageProps {
  title: string;
  /** The signed-in session; absent on the sign-in page. */
  session?: UiSession;
  /** Which navigation entry is the current page. */
  current?: string;
  children?: Child;
}

/** The page shell: head with the embedded assets, navigation, who is signed in, sign out. */
export function Page({ title, session, current, children }: PageProps) {
  return (
    <>
      {/* A constant, never user data: hono/jsx has no doctype of its own, and without one browsers use quirks mode. */}
      {raw("<!DOCTYPE html>")}
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="htmx-config" content={HTMX_CONFIG} />
        <title>{`${title} · gw`}</title>
        {/* No icon: otherwise browsers ask the API for /favicon.ico and log its 401. */}
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href={assets.css.path} />
        <link rel="stylesheet" href={assets.uplotCss.path} />
        <script src={assets.htmx.path} defer></script>
        <script src={assets.sse.path} defer></script>
        <script src={assets.uplot.path} defer></script>
        <script src={assets.js.path} defer></script>
      </head>
      {/* htmx sends the CSRF token as a header with every request it makes. */}
      <body hx-headers={session ? JSON.stringify({ "X-CSRF-Token": session.csrf }) : undefined}>
        <a class="skip" href="#main">
          Skip to content
        </a>
        {session && (
          <header class="top">
            <span class="brand">gw</span>
            <nav aria-label="Main">
              <ul>
                {NAV.map(([href, label]) => (
                  <li>
                    <a href={href} aria-current={current === href ? "page" : undefined}>
                      {label}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
            <div class="who">
              <span>
                {session.principal.name} ({session.principal.role === "admin" ? "admin" : "read only"})
              </span>
              <form class="inline" method="post" action="/ui/sign-out">
                <CsrfField session={session} />
                <button class="secondary" type="submit">
                  Sign out
                </button>
              </form>
            </div>
          </header>
        )}
        <main id="main">
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
    </>
  );
}

/** The hidden field every change form carries. */
export function CsrfField({ session }: { session: UiSession }) {
  return <input type="hidden" name="_csrf" value={session.csrf} />;
}

/** A POST button in its own form (with the CSRF token); data-confirm makes ui.client.js ask first. */
export function ActionButton(props: { session: UiSession; action: string; label: string; confirm?: string; danger?: boolean; fields?: Record<string, string> }) {
  return (
    <form class="inline" method="post" action={props.action} data-confirm={props.confirm}>
      <CsrfField session={props.session} />
      {Object.entries(props.fields ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <button type="submit" class={props.danger ? "danger" : "secondary"}>
        {props.label}
      </button>
    </form>
  );
}
