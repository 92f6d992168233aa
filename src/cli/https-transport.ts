import { createHash, X509Certificate } from "node:crypto";
import { request } from "node:https";
import { connect, type TLSSocket } from "node:tls";
import { GwError } from "../errors.ts";
import type { ApiResponse, ApiTransport } from "./api-transport.ts";
import { UsageError } from "./args.ts";

export interface RemoteTarget {
  url: URL;
  token: string;
  /** pin-sha256:BASE64 (or sha256/BASE64): the server's public key must match. */
  pin?: string;
  /** Accept any certificate (the operator said so with --insecure). */
  insecure?: boolean;
}

/** Normalizes `sha256/X` and `pin-sha256:X` to the base64 digest. */
export function pinDigest(pin: string): string | undefined {
  const m = /^(?:pin-sha256:|sha256\/)([A-Za-z0-9+/]{43}=)$/.exec(pin.trim());
  return m?.[1];
}

/**
 * The management API over HTTPS. The TLS connection is opened and checked (CA chain, or the
 * pin, or nothing with --insecure) before the request, so a token never goes to the wrong server.
 */
export class HttpsTransport implements ApiTransport {
  constructor(private readonly target: RemoteTarget) {}

  async request(method: string, path: string, body?: unknown): Promise<ApiResponse> {
    const res = await this.open(method, path, body);
    const chunks: Buffer[] = [];
    for await (const chunk of res.stream) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    return { status: res.status, contentType: res.contentType, text };
  }

  async stream(path: string, onLine: (line: string) => void): Promise<ApiResponse | undefined> {
    const res = await this.open("GET", path, undefined);
    if (res.status !== 200) {
      const chunks: Buffer[] = [];
      for await (const chunk of res.stream) chunks.push(chunk as Buffer);
      return { status: res.status, contentType: res.contentType, text: Buffer.concat(chunks).toString("utf8") };
    }
    let pending = "";
    for await (const chunk of res.stream) {
      pending += (chunk as Buffer).toString("utf8");
      let nl: number;
      while ((nl = pending.indexOf("\n")) >= 0) {
        onLine(pending.slice(0, nl).replace(/\r$/, ""));
        pending = pending.slice(nl + 1);
      }
    }
    return undefined;
  }

  private async open(method: string, path: string, body: unknown): Promise<{ status: number; contentType: string; stream: AsyncIterable<unknown> }> {
    const { url } = this.target;
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const port = Number(url.port || 443);
    const socket = await this.connectChecked(host, port);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host,
          port,
          method,
          path: `${url.pathname.replace(/\/$/, "")}${path}`,
          headers: {
            authorization: `Bearer ${this.target.token}`,
            accept: "application/json, text/event-stream",
            ...(payload ? { "content-type": "application/json", "content-length": String(payload.length) } : {}),
          },
          createConnection: () => socket,
        } as unknown as Parameters<typeof request>[0],
        (res) => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers["content-type"] ?? ""), stream: res }),
      );
      req.on("error", (e) => reject(new GwError("api_unreachable", `${url.origin}: ${e.message}`)));
      req.end(payload);
    });
  }

  private connectChecked(host: string, port: number): Promise<TLSSocket> {
    const { pin, insecure } = this.target;
    const digest = pin ? pinDigest(pin) : undefined;
    if (pin && !digest) throw new UsageError(`--pin must look like pin-sha256:BASE64 or sha256/BASE64 (what 'gw serve' prints), got "${pin}"`);
    const verifyChain = !digest && !insecure;
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port, servername: /^[\d.:]+$/.test(host) ? undefined : host, rejectUnauthorized: verifyChain, minVersion: "TLSv1.2" });
      socket.once("secureConnect", () => {
        if (digest) {
          const raw = socket.getPeerCertificate(true)?.raw;
          const actual = raw ? createHash("sha256").update(new X509Certificate(raw).publicKey.export({ type: "spki", format: "der" })).digest("base64") : "";
          if (actual !== digest) {
            socket.destroy();
            reject(new GwError("pin_mismatch", `the server at ${host}:${port} has pin-sha256:${actual}, not the pin given: check --pin (or GW_PIN)`));
            return;
          }
        }
        resolve(socket);
      });
      socket.once("error", (e: NodeJS.ErrnoException) => {
        const untrusted = /self[- ]signed|unable to verify|certificate/i.test(e.message) || e.code?.startsWith("DEPTH_ZERO") || e.code?.includes("CERT");
        if (untrusted && verifyChain) {
          reject(new GwError("tls_untrusted", `the certificate of ${host}:${port} is not trusted (${e.code ?? e.message}): pass --pin pin-sha256:... as 'gw serve' printed it, or --insecure`));
        } else {
          reject(new GwError("api_unreachable", `cannot reach the management API at ${host}:${port}: ${e.code ?? e.message}`, { errno: e.code }));
        }
      });
    });
  }
}
