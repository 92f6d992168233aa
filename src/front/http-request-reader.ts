/**
 * Streaming HTTP/1.1 request framing for the tunnel port: finds heads split across chunks,
 * reads Content-Length bodies, handles pipelined requests, and stops at CONNECT because
 * everything after that head is CSTP (docs/protocol.md §5.2, §6). No sockets, no timers.
 */
import { type HttpErrorDetails, type HttpRequest, httpErr, parseRequestHead, type RequestHead } from "./http-head.ts";
import { ok, type Result } from "../errors.ts";

export type ReaderEvent =
  | { kind: "request"; request: HttpRequest }
  | { kind: "error"; status: number; code: string; message: string };

export interface RequestReaderOptions {
  /** Request line + header lines + the empty line. Default 16384; beyond it: 431. */
  maxHeadBytes?: number;
  /** Content-Length limit. Default 65536; beyond it: 413 (decided from the header alone). */
  maxBodyBytes?: number;
}

export interface RequestReader {
  /**
   * Feeds bytes; returns the requests completed by them, in order. The first error ends the
   * reader: it is returned and every later push returns it again (answer it and close).
   * After a CONNECT request the reader parses nothing more: further bytes are only buffered
   * for takeRemainder().
   *
   * At most maxEvents (at least 1) events are returned: the rest stays buffered, unparsed, until a later
   * push (an empty chunk is fine). One 64 KiB chunk can hold thousands of tiny pipelined
   * requests; the caller decides how many it is ready to queue.
   */
  push(chunk: Uint8Array, maxEvents?: number): ReaderEvent[];
  /** Bytes received and not yet returned as a request: a partial request, or requests held back by maxEvents. */
  readonly buffered: number;
  /**
   * Returns (a copy of) the bytes buffered after the last complete request and empties the
   * buffer; a partially received request is discarded with it. After CONNECT this is the
   * start of the tunnel data.
   */
  takeRemainder(): Uint8Array;
  /** "head"/"body": waiting for a request; "tunnel": a CONNECT was read; "failed": error. */
  readonly state: "head" | "body" | "tunnel" | "failed";
}

const LF = 0x0a;
const CR = 0x0d;
const EMPTY = new Uint8Array(0);

export function createRequestReader(options: RequestReaderOptions = {}): RequestReader {
  const maxHead = options.maxHeadBytes ?? 16384;
  const maxBody = options.maxBodyBytes ?? 65536;

  let buf = new Uint8Array(0);
  let start = 0; // first unconsumed byte
  let end = 0; // one past the last buffered byte
  let scan = 0; // where the search for the end of the head resumes
  let state: RequestReader["state"] = "head";
  let head: RequestHead | undefined;
  let bodyLength = 0;
  let failure: ReaderEvent | undefined;

  function append(chunk: Uint8Array): void {
    if (start === end) start = end = scan = 0;
    if (end + chunk.length > buf.length) {
      const live = end - start;
      if (live + chunk.length <= buf.length && start > 0) {
        buf.copyWithin(0, start, end);
      } else {
        const grown = new Uint8Array(Math.max(live + chunk.length, buf.length * 2, 1024));
        grown.set(buf.subarray(start, end));
        buf = grown;
      }
      scan -= start;
      end = live;
      start = 0;
    }
    buf.set(chunk, end);
    end += chunk.length;
  }

  function fail(r: Result<unknown>): ReaderEvent {
    if (r.ok) throw new Error("unreachable");
    const status = (r.error.details as HttpErrorDetails).status;
    failure = { kind: "error", status, code: r.error.code, message: r.error.message };
    state = "failed";
    return failure;
  }

  /** Skips empty lines before a request line (RFC 9112 §2.2). False if a bare CR was seen. */
  function skipLeadingEmptyLines(): boolean {
    while (start < end) {
      if (buf[start] === LF) start++;
      else if (buf[start] === CR) {
        if (start + 1 >= end) break;
        if (buf[start + 1] !== LF) return false;
        start += 2;
      } else break;
    }
    if (scan < start) scan = start;
    return true;
  }

  /** Finds the empty line ending the head: [end of head, end of empty line], or undefined. */
  function findHeadEnd(): [number, number] | undefined {
    for (let i = scan; i < end; i++) {
      if (buf[i] !== LF) continue;
      if (i + 1 >= end) {
        scan = i;
        return undefined;
      }
      const next = buf[i + 1];
      if (next === LF) return [i + 1, i + 2];
      if (next === CR) {
        if (i + 2 >= end) {
          scan = i;
          return undefined;
        }
        if (buf[i + 2] === LF) return [i + 1, i + 3];
      }
    }
    scan = end;
    return undefined;
  }

  /** Decides the body length from the head (RFC 9112 §6.3, minus chunked coding). */
  function bodyLengthOf(h: RequestHead): Result<number> {
    const te = h.headers.getAll("transfer-encoding");
    const cl = h.headers.getAll("content-length");
    if (te.length > 0 && cl.length > 0) {
      return httpErr(400, "http_te_and_cl", "request has both Transfer-Encoding and Content-Length");
    }
    if (te.length > 0) {
      return httpErr(501, "http_transfer_encoding_unsupported", "Transfer-Encoding (chunked bodies) is not supported; send Content-Length");
    }
    if (cl.length === 0) return ok(0);
    // Repeated or comma-listed values are accepted only when they all agree (RFC 9110 §8.6).
    let digits: string | undefined;
    for (const v of cl.flatMap((x) => x.split(","))) {
      const t = v.trim();
      if (!/^\d+$/.test(t)) return httpErr(400, "http_bad_content_length", `invalid Content-Length ${JSON.stringify(t.slice(0, 40))}`);
      const norm = t.replace(/^0+(?=\d)/, "");
      if (digits !== undefined && digits !== norm) return httpErr(400, "http_bad_content_length", "conflicting Content-Length values");
      digits = norm;
    }
    const n = digits!.length > 15 ? Number.POSITIVE_INFINITY : Number(digits);
    if (h.method === "CONNECT" && n > 0) {
      return httpErr(400, "http_connect_with_body", "a CONNECT request carries no body");
    }
    if (n > maxBody) return httpErr(413, "http_body_too_large", `request body of ${digits} bytes exceeds the ${maxBody}-byte limit`);
    return ok(n);
  }

  function parse(events: ReaderEvent[], maxEvents: number): void {
    for (;;) {
      if (events.length >= maxEvents) return;
      if (state === "head") {
        if (!skipLeadingEmptyLines()) {
          events.push(fail(httpErr(400, "http_bad_request_line", "bare CR before the request line")));
          return;
        }
        const found = findHeadEnd();
        if (!found) {
          if (end - start > maxHead) events.push(fail(headTooLarge()));
          return;
        }
        const [headEnd, consumed] = found;
        if (consumed - start > maxHead) {
          events.push(fail(headTooLarge()));
          return;
        }
        const parsed = parseRequestHead(buf.subarray(start, headEnd));
        if (!parsed.ok) {
          events.push(fail(parsed));
          return;
        }
        const len = bodyLengthOf(parsed.value);
        if (!len.ok) {
          events.push(fail(len));
          return;
        }
        start = scan = consumed;
        head = parsed.value;
        bodyLength = len.value;
        state = "body";
      }
      if (state === "body") {
        if (end - start < bodyLength) return;
        const body = bodyLength === 0 ? EMPTY : buf.slice(start, start + bodyLength);
        start = scan = start + bodyLength;
        const request: HttpRequest = { ...head!, body };
        head = undefined;
        events.push({ kind: "request", request });
        // After CONNECT the stream is tunnel data (docs/protocol.md §5.2): stop parsing HTTP.
        state = request.method === "CONNECT" ? "tunnel" : "head";
      }
      if (state === "tunnel") return;
    }
  }

  function headTooLarge(): Result<never> {
    return httpErr(431, "http_head_too_large", `request head exceeds the ${maxHead}-byte limit`);
  }

  return {
    push(chunk: Uint8Array, maxEvents = Number.POSITIVE_INFINITY): ReaderEvent[] {
      if (failure) return [failure];
      if (chunk.length > 0) append(chunk);
      const events: ReaderEvent[] = [];
      if (state !== "tunnel") parse(events, Math.max(1, maxEvents));
      return events;
    },
    get buffered() {
      return end - start;
    },
    takeRemainder(): Uint8Array {
      const rest = buf.slice(start, end);
      start = end = scan = 0;
      if (state === "body") {
        state = "head";
        head = undefined;
      }
      return rest;
    },
    get state() {
      return state;
    },
  };
}
