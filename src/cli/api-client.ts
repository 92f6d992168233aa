import { GwError } from "../errors.ts";
import type { ApiTransport } from "./api-transport.ts";

/** Calls the API and turns its error body into a GwError (same code, same message). */
export class ApiClient {
  constructor(
    readonly transport: ApiTransport,
    /** "local" (the data directory), "server" (the local server via api.json) or "remote" (--url). */
    readonly mode: "local" | "server" | "remote",
  ) {}

  async call<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.transport.request(method, path, body);
    if (res.status === 204) return undefined as T;
    if (res.status >= 200 && res.status < 300) {
      return (res.contentType.includes("json") ? JSON.parse(res.text) : res.text) as T;
    }
    throw errorFrom(res.status, res.text);
  }
}

export function errorFrom(status: number, text: string): GwError {
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string; details?: unknown } };
    if (body.error?.code) return new GwError(body.error.code, body.error.message ?? `HTTP ${status}`, body.error.details);
  } catch {}
  return new GwError("api_error", `HTTP ${status}: ${text.slice(0, 200)}`);
}
