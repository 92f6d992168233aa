/**
 * HTTP/1.1 responses for the tunnel port, written byte-exactly: header names keep the case
 * they are given in because openconnect matches X-CSTP-* / X-DTLS-* case-sensitively and
 * skips exactly one space after the colon (docs/protocol.md §5.2, §9 items 5–6).
 *
 * Invalid input here is a programming error (all values come from our own code or from a
 * request head the parser already validated), so it throws instead of returning a Result.
 */
import { GwError } from "../errors.ts";

export interface ResponseSpec {
  status: number;
  reason: string;
  /** Written in order, exactly as given. */
  headers: readonly (readonly [string, string])[];
  /** Strings are sent as UTF-8. */
  body?: string | Uint8Array;
}

const encoder = new TextEncoder();
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Field values and the reason phrase: no CR, LF, NUL or other controls except HTAB.
const BAD_TEXT = /[\x00-\x08\x0a-\x1f\x7f]/;

/**
 * `HTTP/1.1 <status> <reason>` + headers + Content-Length + empty line + body.
 * Content-Length is added unless the caller gave one (e.g. for HEAD) or the status has no
 * body (1xx, 204, 304). A response without a body gets `Content-Length: 0`, so keep-alive
 * clients do not wait for the connection to close (RFC 9112 §6.3).
 */
export function formatResponse(spec: ResponseSpec): Uint8Array {
  const { status, reason, headers } = spec;
  if (!Number.isInteger(status) || status < 100 || status > 599) {
    throw new GwError("http_response_invalid", `invalid HTTP status ${status}`);
  }
  const body = typeof spec.body === "string" ? encoder.encode(spec.body) : spec.body;
  const noBodyStatus = status < 200 || status === 204 || status === 304;
  if (noBodyStatus && body && body.length > 0) {
    throw new GwError("http_response_invalid", `status ${status} cannot carry a body`);
  }
  const given = headers.find(([n]) => n.toLowerCase() === "content-length");
  if (given && body && given[1] !== String(body.length)) {
    throw new GwError("http_response_invalid", `Content-Length ${given[1]} does not match the ${body.length}-byte body`);
  }
  const all = given || noBodyStatus ? headers : [...headers, ["Content-Length", String(body?.length ?? 0)] as const];
  return assemble(`HTTP/1.1 ${status} ${checkText(reason, "reason phrase")}\r\n`, all, body);
}

/**
 * The CONNECT answer: `HTTP/1.1 200 CONNECTED` (openconnect needs the 13 bytes
 * `HTTP/1.1 200 ` and a reason phrase, docs/protocol.md §5.2) + headers + empty line; no
 * Content-Length because CSTP frames follow immediately. Send it in its own write (§6.3).
 */
export function formatConnectResponse(headers: readonly (readonly [string, string])[]): Uint8Array {
  return assemble("HTTP/1.1 200 CONNECTED\r\n", headers, undefined);
}

function assemble(statusLine: string, headers: ResponseSpec["headers"], body: Uint8Array | undefined): Uint8Array {
  let text = statusLine;
  for (const [name, value] of headers) {
    if (!TOKEN.test(name)) throw new GwError("http_response_invalid", `invalid header name ${JSON.stringify(name)}`);
    text += `${name}: ${checkText(value, `value of ${name}`)}\r\n`;
  }
  text += "\r\n";
  const headBytes = encoder.encode(text);
  if (!body || body.length === 0) return headBytes;
  const out = new Uint8Array(headBytes.length + body.length);
  out.set(headBytes, 0);
  out.set(body, headBytes.length);
  return out;
}

function checkText(s: string, what: string): string {
  if (BAD_TEXT.test(s)) throw new GwError("http_response_invalid", `control character in ${what}`);
  return s;
}
