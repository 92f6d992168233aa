import { createUiApp } from "../../../src/ui/ui-app.tsx";
import { apiFixture, type Fixture } from "../api/fixture.ts";

export const PASSWORD = "correct horse battery";

export interface UiFixture {
  api: Fixture;
  /** Moves the UI's clock (session expiry). */
  advance(ms: number): void;
  /** With `stream`, the body is left unread (`response`) for event streams. */
  request(method: string, path: string, o?: { cookie?: string; form?: Record<string, string>; headers?: Record<string, string>; stream?: boolean }): Promise<{ status: number; text: string; headers: Headers; response?: Response }>;
  /** Signs in as an admin account (created with this role) and returns its cookie and CSRF token. */
  signIn(name: string, role: "admin" | "read"): Promise<{ cookie: string; csrf: string }>;
  /** Signs in with an API token. */
  signInWithToken(token: string): Promise<{ cookie: string; csrf: string }>;
}

/** The web UI in process on the API fixture's control plane, with its own clock for the sessions. */
export function uiFixture(o: { liveKeepaliveMs?: number } = {}): UiFixture {
  const api = apiFixture();
  let offset = 0;
  const ui = createUiApp(api.control, { now: () => Date.now() + offset, liveIntervalMs: 20, ...o });
  const request: UiFixture["request"] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.cookie) headers.cookie = o.cookie;
    let body: string | undefined;
    if (o.form) {
      headers["content-type"] = "application/x-www-form-urlencoded";
      body = new URLSearchParams(o.form).toString();
    }
    const res = await ui.request(`https://gw.test${path}`, { method, headers, body }, { address: "198.51.100.20" });
    if (o.stream) return { status: res.status, text: "", headers: res.headers, response: res };
    return { status: res.status, text: await res.text(), headers: res.headers };
  };
  const session = async (res: { headers: Headers; status: number; text: string }) => {
    if (res.status !== 303) throw new Error(`sign-in failed: ${res.status} ${res.text}`);
    const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
    const page = await request("GET", "/ui", { cookie });
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1];
    if (!csrf) throw new Error("no CSRF token on the dashboard");
    return { cookie, csrf };
  };
  return {
    api,
    advance: (ms) => void (offset += ms),
    request,
    async signIn(name, role) {
      const added = await api.control.admins.add({ name, role, password: PASSWORD }, "local-cli");
      if (!added.ok) throw added.error;
      return session(await request("POST", "/ui/sign-in", { form: { name, password: PASSWORD } }));
    },
    async signInWithToken(token) {
      return session(await request("POST", "/ui/sign-in/token", { form: { token } }));
    },
  };
}
