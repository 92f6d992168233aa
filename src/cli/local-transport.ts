import { join } from "node:path";
import { createApiApp } from "../api/app.ts";
import { LOCAL_CLI_ACTOR } from "../control/audit.ts";
import { ControlPlane } from "../control/control-plane.ts";
import { otpKeySource } from "../control/auth/otp-key.ts";
import { SessionRegistry } from "../control/sessions.ts";
import { runtime } from "../runtime/current.ts";
import { openSqliteStore } from "../store/sqlite-store.ts";
import type { ApiResponse, ApiTransport } from "./api-transport.ts";

/**
 * The same API, served in process on the data directory's store: the CLI works the same way
 * whether or not the server runs. Changes are audited as "local-cli". No sessions live here.
 */
export class LocalTransport implements ApiTransport {
  private readonly control: ControlPlane;
  private readonly app: ReturnType<typeof createApiApp>;

  constructor(dataDir: string) {
    const store = openSqliteStore(join(dataDir, "gw.db"));
    if (!store.ok) throw store.error;
    this.control = new ControlPlane({ store: store.value, hasher: runtime.passwordHasher, sessions: new SessionRegistry(300_000, Date.now), now: Date.now, otpKey: otpKeySource(dataDir) });
    this.app = createApiApp(this.control, { authenticate: () => ({ name: LOCAL_CLI_ACTOR, scope: "admin" }) });
  }

  async request(method: string, path: string, body?: unknown): Promise<ApiResponse> {
    const res = await this.app.request(path, {
      method,
      headers: { authorization: "Bearer local", ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, contentType: res.headers.get("content-type") ?? "", text: await res.text() };
  }

  async stream(path: string): Promise<ApiResponse> {
    return this.request("GET", path);
  }

  close(): void {
    this.control.store.close();
  }
}
