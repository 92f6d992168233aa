import type { LoginClient } from "../control/auth/auth-step.ts";
import type { LoginOutcome, LoginRequest } from "../control/auth/login-flow.ts";
import { formDocument, refusalDocument, successDocument, type AuthDialect } from "./auth-documents.ts";
import { parseAuthRequest, type AuthRequest } from "./auth-request.ts";
import { parseCookies, setCookie } from "./cookies.ts";
import type { HttpRequest } from "./http-head.ts";
import type { ResponseSpec } from "./http-response.ts";
import { child, text } from "./xml.ts";

/** What a login answers; LoginFlow's outcome fits, and so does a worker's copy of it from the main process. */
export type LoginAnswer = Exclude<LoginOutcome, { kind: "success" }> | { kind: "success"; session: { configHash: string }; token: string };

/** Runs one login request: LoginFlow, or in a worker process the main process's (docs/architecture.md §7). */
export interface LoginHandler {
  handle(request: LoginRequest): Promise<LoginAnswer>;
}

/** The session cookie (docs/protocol.md §2.8) and the login-context cookie (§1: AnyConnect may switch connections). */
export const SESSION_COOKIE = "webvpn";
export const CONTEXT_COOKIE = "webvpncontext";

/**
 * POST (any path: the init goes to the URL path the user typed, docs/protocol.md §9 item 24) and
 * GET / (the legacy fallback's first request, §2.9): both dialects of the login.
 */
export async function handleAuthRequest(
  request: HttpRequest,
  flow: LoginHandler,
  client: Omit<LoginClient, "capabilities">,
  connection: AuthConnectionState = {},
): Promise<ResponseSpec> {
  const parsed =
    request.method === "GET"
      ? parseAuthRequest(undefined, new Uint8Array(0))
      : parseAuthRequest(request.headers.get("content-type"), request.body);
  if (!parsed.ok) {
    return { status: 400, reason: "Bad Request", headers: [["Content-Type", "text/plain; charset=utf-8"]], body: `${parsed.error.message}\n` };
  }
  const auth = parsed.value;
  // A GET or an empty POST gets the form in the legacy dialect: that is what the fallback expects.
  const dialect: AuthDialect = auth.kind === "empty" ? "form" : auth.dialect;
  const outcome = await flow.handle({
    contextId: contextIdOf(auth) ?? parseCookies(request.headers.get("cookie")).get(CONTEXT_COOKIE) ?? continuing(connection, auth),
    kind: auth.kind === "init" || auth.kind === "empty" ? "init" : "answer",
    answers: auth.fields,
    group: auth.groupSelect,
    client: { ...client, capabilities: auth.capabilities, ssoDhPubkey: request.headers.get("x-anyconnect-strap-dh-pubkey") },
  });
  connection.contextId = outcome.kind === "form" ? outcome.contextId : undefined;
  return render(dialect, outcome);
}

/**
 * The login in progress on one TLS connection: a client that answers a challenge on the same
 * connection without echoing the context cookie (a strict reading of the spec) still continues it.
 */
export interface AuthConnectionState {
  contextId?: string;
}

/** The connection's login, unless the request starts a new one (it names a user). */
function continuing(connection: AuthConnectionState, auth: AuthRequest): string | undefined {
  return auth.fields.has("username") ? undefined : connection.contextId;
}

function contextIdOf(auth: AuthRequest): string | undefined {
  const handle = auth.opaque ? child(auth.opaque, "auth-handle") : undefined;
  return handle ? text(handle) : undefined;
}

function render(dialect: AuthDialect, outcome: LoginAnswer): ResponseSpec {
  const headers: [string, string][] = [
    ["Content-Type", "text/xml; charset=utf-8"],
    ["X-Transcend-Version", "1"],
    ["Cache-Control", "no-store"],
  ];
  let body: string;
  switch (outcome.kind) {
    case "form":
      headers.push(["Set-Cookie", setCookie(CONTEXT_COOKIE, outcome.contextId)]);
      body = formDocument(dialect, outcome.form, outcome.contextId);
      break;
    case "success":
      headers.push(["Set-Cookie", setCookie(CONTEXT_COOKIE, "")]);
      headers.push(["Set-Cookie", setCookie(SESSION_COOKIE, outcome.token)]);
      body = successDocument(dialect, outcome.token, outcome.session.configHash);
      break;
    case "refused":
      headers.push(["Set-Cookie", setCookie(CONTEXT_COOKIE, "")]);
      if (outcome.retryAfterSeconds !== undefined) headers.push(["Retry-After", String(outcome.retryAfterSeconds)]);
      body = refusalDocument(dialect, outcome.message);
      break;
  }
  return { status: 200, reason: "OK", headers, body };
}
