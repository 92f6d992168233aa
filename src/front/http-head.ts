/**
 * HTTP/1.1 request heads for the tunnel port (RFC 9112), parsed strictly: what real clients
 * send (docs/protocol.md §2.2, §5.1) is plain, so anything unusual is refused rather than guessed.
 * Framing (finding the head, bodies, pipelining) lives in http-request-reader.ts.
 */
import { Buffer } from "node:buffer";
import { err, ok, type Result } from "../errors.ts";

export type HttpVersion = "HTTP/1.0" | "HTTP/1.1";

/**
 * Methods the tunnel port serves: GET (form-mode fallback, docs/protocol.md §2.9), POST (auth),
 * HEAD, CONNECT (the tunnel, §5). Every other method — known to HTTP or not — gets 405 with
 * code "http_method_not_allowed"; the response should carry `Allow: GET, POST, HEAD, CONNECT`.
 */
export const ALLOWED_METHODS: readonly string[] = ["GET", "POST", "HEAD", "CONNECT"];

/** Ordered header fields as received; names keep their case, lookups ignore it. */
export class HeaderList implements Iterable<readonly [string, string]> {
  readonly #entries: (readonly [string, string])[];

  constructor(entries: Iterable<readonly [string, string]> = []) {
    this.#entries = Array.from(entries, ([n, v]) => [n, v] as const);
  }

  get size(): number {
    return this.#entries.length;
  }

  /** The first value of `name` (case-insensitive), or undefined. */
  get(name: string): string | undefined {
    const want = name.toLowerCase();
    for (const [n, v] of this.#entries) if (n.toLowerCase() === want) return v;
    return undefined;
  }

  /** Every value of `name` in order of arrival. */
  getAll(name: string): string[] {
    const want = name.toLowerCase();
    const out: string[] = [];
    for (const [n, v] of this.#entries) if (n.toLowerCase() === want) out.push(v);
    return out;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  [Symbol.iterator](): Iterator<readonly [string, string]> {
    return this.#entries[Symbol.iterator]();
  }
}

/**
 * A header value copied out of the request head. A sliced string keeps its whole source alive,
 * so a value kept for as long as a session (its User-Agent) would keep the CONNECT head with it:
 * half a kilobyte or more a session (issue 13: memory per session).
 */
export function detachedValue(value: string): string {
  return Buffer.from(value, "latin1").toString("latin1");
}

export interface HttpRequest {
  method: string;
  target: string;
  version: HttpVersion;
  headers: HeaderList;
  body: Uint8Array;
}

export type RequestHead = Omit<HttpRequest, "body">;

/** GwError.details of every error returned here and by the reader: the HTTP status to answer. */
export interface HttpErrorDetails {
  status: number;
}

export const httpErr = <T = never>(status: number, code: string, message: string): Result<T> =>
  err(code, message, { status } satisfies HttpErrorDetails);

const TCHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const VERSION = /^HTTP\/(\d)\.(\d)$/;
// Request target: visible ASCII only (no spaces, no controls, no obs-text).
const TARGET = /^[\x21-\x7e]+$/;
// Field value after trimming: VCHAR / obs-text with inner SP / HTAB (RFC 9110 §5.5).
const BAD_VALUE_CHAR = /[\x00-\x08\x0a-\x1f\x7f]/;

/**
 * Parses one request head: the bytes from the request line up to, not including, the empty
 * line. CRLF and lone LF both end a line; NUL and a CR not followed by LF are refused.
 * The head is read as latin1 (one char per byte), so header values are byte-transparent.
 * Content-Length / Transfer-Encoding are the reader's business, not checked here.
 */
export function parseRequestHead(head: Uint8Array): Result<RequestHead> {
  const decoded = decodeHeadBytes(head);
  if (!decoded.ok) return decoded;
  const lines = decoded.value;

  const requestLine = lines[0] ?? "";
  const parts = requestLine.split(" ");
  if (parts.length !== 3 || parts.some((p) => p === "")) {
    return httpErr(400, "http_bad_request_line", `malformed request line ${quote(requestLine)}`);
  }
  const [method, target, version] = parts as [string, string, string];
  if (!TCHAR.test(method)) {
    return httpErr(400, "http_bad_request_line", `invalid method token ${quote(method)}`);
  }
  if (!TARGET.test(target)) {
    return httpErr(400, "http_bad_request_line", `invalid request target ${quote(target)}`);
  }
  const v = VERSION.exec(version);
  if (!v) return httpErr(400, "http_bad_request_line", `invalid HTTP version ${quote(version)}`);
  if (version !== "HTTP/1.0" && version !== "HTTP/1.1") {
    return httpErr(505, "http_version_not_supported", `${version} is not supported; use HTTP/1.1`);
  }
  if (!ALLOWED_METHODS.includes(method)) {
    return httpErr(
      405,
      "http_method_not_allowed",
      `method ${quote(method)} is not served here (allowed: ${ALLOWED_METHODS.join(", ")})`,
    );
  }

  const entries: [string, string][] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    // obs-fold (RFC 9112 §5.2): no real client folds lines, so a continuation line is refused
    // rather than merged (merging is a classic request-smuggling ambiguity).
    if (line.startsWith(" ") || line.startsWith("\t")) {
      return httpErr(400, "http_obs_fold", `folded header line ${quote(line)} is not accepted`);
    }
    const colon = line.indexOf(":");
    const name = colon < 0 ? "" : line.slice(0, colon);
    // Whitespace before the colon must be refused (RFC 9112 §5.1); TCHAR excludes it.
    if (!TCHAR.test(name)) {
      return httpErr(400, "http_bad_header", `malformed header line ${quote(line)}`);
    }
    const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
    if (BAD_VALUE_CHAR.test(value)) {
      return httpErr(400, "http_bad_header", `control character in header ${quote(name)}`);
    }
    entries.push([name, value]);
  }
  return ok({ method, target, version, headers: new HeaderList(entries) });
}

/** Latin1-decodes the head, refusing NUL and bare CR, and splits it into lines. */
function decodeHeadBytes(head: Uint8Array): Result<string[]> {
  let text = "";
  const CHUNK = 4096;
  for (let start = 0; start < head.length; start += CHUNK) {
    const part = head.subarray(start, Math.min(start + CHUNK, head.length));
    for (let i = 0; i < part.length; i++) {
      const b = part[i]!;
      if (b === 0) return httpErr(400, "http_bad_header", "NUL byte in request head");
      if (b === 0x0d && head[start + i + 1] !== 0x0a) {
        return httpErr(400, "http_bad_header", "bare CR in request head");
      }
    }
    text += String.fromCharCode.apply(null, part as unknown as number[]);
  }
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.endsWith("\r")) lines[i] = l.slice(0, -1);
  }
  // A head ending in a line terminator leaves one empty trailing element.
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return ok(lines);
}

/** Quotes a (possibly hostile) string for an error message: bounded, controls escaped. */
export function quote(s: string): string {
  const cut = s.length > 80 ? `${s.slice(0, 80)}…` : s;
  return JSON.stringify(cut);
}
