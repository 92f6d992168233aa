/**
 * Fuzz targets for the tunnel port's HTTP layer: parseRequestHead (src/front/http-head.ts) and
 * createRequestReader (src/front/http-request-reader.ts).
 */
import fc from "fast-check";
import { ALLOWED_METHODS, parseRequestHead, type HttpErrorDetails } from "../../../src/front/http-head.ts";
import { createRequestReader, type ReaderEvent, type RequestReaderOptions } from "../../../src/front/http-request-reader.ts";
import { chunkSizes, concat, latin1, mutatedBytes, splitBySizes, strOf, toHex } from "./bytes.ts";
import { check, checkTypedError, type FuzzTarget } from "./target.ts";

// ---- generators ---------------------------------------------------------------------------

const TCHARS = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const VISIBLE = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join("");
const OBS_TEXT = Array.from({ length: 0x80 }, (_, i) => String.fromCharCode(0x80 + i)).join("");

const token = strOf(TCHARS, 1, 24);
const headerName = fc.oneof(
  token,
  fc.constantFrom("Host", "User-Agent", "Cookie", "X-Transcend-Version", "X-Aggregate-Auth", "X-CSTP-Version", "X-DTLS-Master-Secret", "X-Pad"),
);
/** A field value as a client sends it: no leading or trailing whitespace, inner SP/HTAB allowed. */
const headerValue = fc.oneof(
  { weight: 3, arbitrary: strOf(VISIBLE, 0, 60) },
  { weight: 1, arbitrary: fc.tuple(strOf(VISIBLE + OBS_TEXT, 1, 20), strOf(VISIBLE + OBS_TEXT + " \t", 0, 40), strOf(VISIBLE + OBS_TEXT, 1, 20)).map((p) => p.join("")) },
);
const requestTarget = fc.oneof(fc.constantFrom("/", "/auth", "/CSCOSSLC/tunnel", "/VENDORSSLC/tunnel", "/+CSCOE+/logon.html"), strOf(VISIBLE, 1, 40));
const framing = (name: string) => ["content-length", "transfer-encoding"].includes(name.toLowerCase());

export interface GeneratedRequest {
  method: string;
  target: string;
  version: "HTTP/1.0" | "HTTP/1.1";
  headers: [string, string][];
  body: Uint8Array;
  /** Line terminator used for every line ("\r\n" or "\n"). */
  eol: string;
}

/** Formats a request the way a client writes it; Content-Length is added when there is a body. */
export function formatRequest(r: GeneratedRequest): Uint8Array {
  const lines = [`${r.method} ${r.target} ${r.version}`, ...r.headers.map(([n, v]) => `${n}: ${v}`)];
  if (r.body.length > 0) lines.push(`Content-Length: ${r.body.length}`);
  return concat([latin1(lines.map((l) => l + r.eol).join("") + r.eol), r.body]);
}

/** The header list the parser must return for `r` (formatRequest's Content-Length included). */
function expectedHeaders(r: GeneratedRequest): [string, string][] {
  return r.body.length > 0 ? [...r.headers, ["Content-Length", String(r.body.length)]] : r.headers;
}

export const validRequest: fc.Arbitrary<GeneratedRequest> = fc.record({
  method: fc.constantFrom("GET", "POST", "HEAD"),
  target: requestTarget,
  version: fc.constantFrom("HTTP/1.0" as const, "HTTP/1.1" as const),
  headers: fc.array(fc.tuple(headerName, headerValue), { maxLength: 12 }).map((hs) => hs.filter(([n]) => !framing(n))),
  body: fc.oneof(fc.constant(new Uint8Array(0)), fc.uint8Array({ maxLength: 400 })),
  eol: fc.constantFrom("\r\n", "\n"),
});

const openconnectUserAgent = "Open AnyConnect VPN Agent v9.01-3";

/** openconnect 9.01's init POST (docs/protocol.md §2.2): XML body, X-Pad padding. */
export const openconnectPost: fc.Arbitrary<GeneratedRequest> = fc
  .tuple(fc.string({ maxLength: 40 }), fc.integer({ min: 0, max: 64 }))
  .map(([version, pad]) => ({
    method: "POST",
    target: "/",
    version: "HTTP/1.1",
    headers: [
      ["Host", "vpn.example"],
      ["User-Agent", openconnectUserAgent],
      ["Accept", "*/*"],
      ["Accept-Encoding", "identity"],
      ["X-Transcend-Version", "1"],
      ["X-Aggregate-Auth", "1"],
      ["X-Support-HTTP-Auth", "true"],
      ["X-Pad", "0".repeat(pad)],
      ["Content-Type", "application/x-www-form-urlencoded"],
    ],
    body: new TextEncoder().encode(
      `<?xml version="1.0" encoding="UTF-8"?>\n<config-auth client="vpn" type="init" aggregate-auth-version="2"><version who="vpn">${version.replace(/[<&]/g, "")}</version></config-auth>`,
    ),
    eol: "\r\n",
  }));

/** openconnect's CONNECT (docs/protocol.md §5.1); what follows it on the wire is CSTP. */
export const openconnectConnect: fc.Arbitrary<GeneratedRequest> = fc
  .tuple(fc.constantFrom("/CSCOSSLC/tunnel", "/VENDORSSLC/tunnel"), strOf("0123456789ABCDEF", 64, 64), strOf(TCHARS, 1, 32))
  .map(([target, secret, host]) => ({
    method: "CONNECT",
    target,
    version: "HTTP/1.1",
    headers: [
      ["Host", "vpn.example"],
      ["User-Agent", openconnectUserAgent],
      ["Cookie", `webvpn=${secret.toLowerCase()}`],
      ["X-CSTP-Version", "1"],
      ["X-CSTP-Hostname", host],
      ["X-CSTP-Base-MTU", "1500"],
      ["X-CSTP-Address-Type", "IPv6,IPv4"],
      ["X-DTLS-Master-Secret", secret],
      ["X-DTLS-CipherSuite", "OC-DTLS1_2-AES256-GCM:OC-DTLS1_2-AES128-GCM:AES256-SHA:AES128-SHA"],
      ["X-DTLS-Accept-Encoding", "lzs"],
    ],
    body: new Uint8Array(0),
    eol: "\r\n",
  }));

/** A pipelined stream: requests, possibly leading empty lines, possibly a CONNECT plus tunnel bytes. */
export const requestStream = fc
  .record({
    leading: fc.constantFrom("", "\r\n", "\n\r\n"),
    requests: fc.array(fc.oneof(validRequest, openconnectPost), { minLength: 1, maxLength: 4 }),
    connect: fc.option(fc.tuple(openconnectConnect, fc.uint8Array({ maxLength: 64 })), { nil: undefined }),
  })
  .map((s) => ({
    ...s,
    bytes: concat([
      latin1(s.leading),
      ...s.requests.map(formatRequest),
      ...(s.connect ? [formatRequest(s.connect[0]), s.connect[1]] : []),
    ]),
  }));

const readerOptions: fc.Arbitrary<RequestReaderOptions> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: fc.record({ maxHeadBytes: fc.integer({ min: 16, max: 2048 }), maxBodyBytes: fc.integer({ min: 0, max: 512 }) }) },
);

// ---- checks -------------------------------------------------------------------------------

type NormalEvent =
  | { kind: "request"; method: string; target: string; version: string; headers: [string, string][]; body: string }
  | { kind: "error"; status: number; code: string; message: string };

function normal(e: ReaderEvent): NormalEvent {
  if (e.kind === "error") return { kind: "error", status: e.status, code: e.code, message: e.message };
  const r = e.request;
  return { kind: "request", method: r.method, target: r.target, version: r.version, headers: [...r.headers].map(([n, v]) => [n, v]), body: toHex(r.body) };
}

/** Pushes the chunks; collects events up to and including the first error. */
function readAll(chunks: Uint8Array[], options: RequestReaderOptions) {
  const reader = createRequestReader(options);
  const events: NormalEvent[] = [];
  for (const c of chunks) {
    for (const e of reader.push(c)) {
      const n = normal(e);
      checkReaderEvent(n);
      events.push(n);
      if (n.kind === "error") return { events, state: reader.state, remainder: "" };
    }
  }
  return { events, state: reader.state, remainder: toHex(reader.takeRemainder()) };
}

function checkReaderEvent(e: NormalEvent): void {
  if (e.kind === "error") {
    checkTypedError(e, "http_");
    check(Number.isInteger(e.status) && e.status >= 400 && e.status <= 599, `error ${e.code} with status ${e.status}`);
    return;
  }
  check(ALLOWED_METHODS.includes(e.method), `request with method ${e.method}`);
}

function checkHeadResult(head: Uint8Array): void {
  const r = parseRequestHead(head);
  if (!r.ok) {
    checkTypedError(r.error, "http_");
    const status = (r.error.details as HttpErrorDetails | undefined)?.status;
    check(typeof status === "number" && status >= 400 && status <= 599, `${r.error.code} without an HTTP status`);
    return;
  }
  check(ALLOWED_METHODS.includes(r.value.method), `parsed method ${r.value.method}`);
  check(/^[\x21-\x7e]+$/.test(r.value.target), `parsed target ${JSON.stringify(r.value.target)}`);
  for (const [n, v] of r.value.headers) {
    check(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(n), `parsed header name ${JSON.stringify(n)}`);
    // Only SP and HTAB are optional whitespace (RFC 9110 §5.6.3); NBSP (0xA0) is obs-text and stays.
    check(!/[\x00-\x08\x0a-\x1f\x7f]/.test(v) && !/^[ \t]|[ \t]$/.test(v), `parsed header value ${JSON.stringify(v)}`);
  }
}

/** The head of a formatted request, without the empty line (what parseRequestHead takes). */
function headOf(r: GeneratedRequest): Uint8Array {
  const bytes = formatRequest(r);
  return bytes.subarray(0, bytes.length - r.body.length - r.eol.length);
}

const headSeeds = fc.oneof(validRequest, openconnectPost, openconnectConnect).map(headOf);

// ---- scaling shapes -----------------------------------------------------------------------

function manyHeaders(n: number): Uint8Array {
  const line = "X-Header-Name: some value here\r\n";
  return latin1(`POST /auth HTTP/1.1\r\n${line.repeat(Math.max(1, Math.floor(n / line.length)))}\r\n`);
}
function longHeaderLine(n: number): Uint8Array {
  return latin1(`GET / HTTP/1.1\r\nX-Pad: ${"0".repeat(n)}\r\n\r\n`);
}
function pipelinedGets(n: number): Uint8Array {
  const one = "GET / HTTP/1.1\r\nHost: vpn\r\n\r\n";
  return latin1(one.repeat(Math.max(1, Math.floor(n / one.length))));
}
const bigLimits = (n: number): RequestReaderOptions => ({ maxHeadBytes: n * 2 + 1024, maxBodyBytes: n * 2 });
const headWithoutEmptyLine = (b: Uint8Array) => b.subarray(0, b.length - 2);

export const httpHeadTarget: FuzzTarget = {
  name: "http-head",
  properties: [
    {
      name: "random bytes are parsed or refused with a typed error",
      testRuns: 300,
      make: () => fc.property(fc.uint8Array({ maxLength: 300 }), (b) => checkHeadResult(b)),
    },
    {
      name: "mutated client heads are parsed or refused with a typed error",
      weight: 2,
      testRuns: 400,
      make: () => fc.property(mutatedBytes(headSeeds, 6), (b) => checkHeadResult(b)),
    },
    {
      name: "valid heads parse to exactly what was written",
      testRuns: 300,
      make: () =>
        fc.property(fc.oneof(validRequest, openconnectPost, openconnectConnect), (req) => {
          const r = parseRequestHead(headOf(req));
          check(r.ok, () => `valid head refused: ${!r.ok && r.error.code}: ${!r.ok && r.error.message}`);
          const { method, target, version, headers } = r.value;
          const got = JSON.stringify([method, target, version, [...headers]]);
          const want = JSON.stringify([req.method, req.target, req.version, expectedHeaders(req)]);
          check(got === want, () => `parsed ${got}, wrote ${want}`);
        }),
    },
  ],
  scaling: [
    { name: "many headers", base: 4096, make: (n) => headWithoutEmptyLine(manyHeaders(n)), bytes: (b) => b.length, run: (b) => parseRequestHead(b) },
    { name: "long header line", base: 4096, make: (n) => headWithoutEmptyLine(longHeaderLine(n)), bytes: (b) => b.length, run: (b) => parseRequestHead(b) },
  ],
};

export const httpReaderTarget: FuzzTarget = {
  name: "http-reader",
  properties: [
    {
      name: "the events are the same however the bytes are split (random, mutated, pipelined streams)",
      weight: 3,
      testRuns: 300,
      make: () =>
        fc.property(
          fc.oneof(fc.uint8Array({ maxLength: 400 }), mutatedBytes(requestStream.map((s) => s.bytes), 6)),
          readerOptions,
          chunkSizes,
          (bytes, options, sizes) => {
            const whole = readAll([bytes], options);
            const split = readAll(splitBySizes(bytes, sizes), options);
            const a = JSON.stringify(whole);
            const b = JSON.stringify(split);
            check(a === b, () => `one chunk gave ${a}\nsplit ${JSON.stringify(sizes)} gave ${b}`);
          },
        ),
    },
    {
      name: "valid pipelined requests come out as written, CONNECT's tunnel bytes as the remainder",
      weight: 2,
      testRuns: 200,
      make: () =>
        fc.property(requestStream, chunkSizes, (stream, sizes) => {
          const got = readAll(splitBySizes(stream.bytes, sizes), {});
          const written = [...stream.requests, ...(stream.connect ? [stream.connect[0]] : [])];
          const want = written.map((r) => ({
            kind: "request",
            method: r.method,
            target: r.target,
            version: r.version,
            headers: expectedHeaders(r),
            body: toHex(r.body),
          }));
          check(JSON.stringify(got.events) === JSON.stringify(want), () => `events ${JSON.stringify(got.events)}\nwant ${JSON.stringify(want)}`);
          check(got.state === (stream.connect ? "tunnel" : "head"), `state ${got.state}`);
          check(got.remainder === (stream.connect ? toHex(stream.connect[1]) : ""), "remainder is not the tunnel data");
        }),
    },
    {
      name: "an oversize head is refused with 431, an oversize Content-Length with 413 from the head alone",
      testRuns: 200,
      make: () =>
        fc.property(validRequest, fc.integer({ min: 16, max: 1024 }), fc.integer({ min: 1, max: 1e9 }), chunkSizes, (req, limit, excess, sizes) => {
          const padded: GeneratedRequest = { ...req, headers: [...req.headers, ["X-Pad", "0".repeat(limit)]] };
          const big = readAll(splitBySizes(formatRequest(padded), sizes), { maxHeadBytes: limit });
          check(big.events.length === 1 && big.events[0]!.kind === "error" && big.events[0]!.status === 431, () => `oversize head gave ${JSON.stringify(big.events)}`);

          const head = headOf({ ...req, body: new Uint8Array(0), headers: [...req.headers, ["Content-Length", String(limit + excess)]] });
          const headOnly = concat([head, latin1(req.eol)]);
          const tooLong = readAll(splitBySizes(headOnly, sizes), { maxBodyBytes: limit });
          check(
            tooLong.events.length === 1 && tooLong.events[0]!.kind === "error" && tooLong.events[0]!.status === 413,
            () => `oversize body gave ${JSON.stringify(tooLong.events)}`,
          );
        }),
    },
  ],
  scaling: [
    { name: "many headers, one chunk", base: 4096, make: manyHeaders, bytes: (b) => b.length, run: (b) => createRequestReader(bigLimits(b.length)).push(b) },
    {
      name: "many headers, 1 byte per push",
      base: 2048,
      make: manyHeaders,
      bytes: (b) => b.length,
      run: (b: Uint8Array) => {
        const r = createRequestReader(bigLimits(b.length));
        for (let i = 0; i < b.length; i++) r.push(b.subarray(i, i + 1));
      },
    },
    { name: "long header line", base: 4096, make: longHeaderLine, bytes: (b) => b.length, run: (b) => createRequestReader(bigLimits(b.length)).push(b) },
    { name: "pipelined GETs", base: 4096, make: pipelinedGets, bytes: (b) => b.length, run: (b) => createRequestReader().push(b) },
  ],
};
