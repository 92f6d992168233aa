import { describe, expect, test } from "bun:test";
import { ALLOWED_METHODS, detachedValue, HeaderList, parseRequestHead } from "../../../src/front/http-head.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const latin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

function parse(s: string) {
  return parseRequestHead(latin1(s));
}
function expectErr(s: string, status: number, code: string) {
  const r = parse(s);
  expect(r.ok).toBe(false);
  if (!r.ok) {
    expect(r.error.code).toBe(code);
    expect((r.error.details as { status: number }).status).toBe(status);
  }
}

describe("HeaderList", () => {
  const h = new HeaderList([
    ["Set-Cookie", "a=1"],
    ["X-CSTP-MTU", "1400"],
    ["set-cookie", "b=2"],
  ]);
  test("get is case-insensitive and returns the first", () => {
    expect(h.get("SET-COOKIE")).toBe("a=1");
    expect(h.get("x-cstp-mtu")).toBe("1400");
    expect(h.get("missing")).toBeUndefined();
  });
  test("getAll keeps order", () => {
    expect(h.getAll("Set-Cookie")).toEqual(["a=1", "b=2"]);
    expect(h.getAll("nope")).toEqual([]);
  });
  test("has, size, iteration preserve names", () => {
    expect(h.has("X-Cstp-Mtu")).toBe(true);
    expect(h.has("X-Other")).toBe(false);
    expect(h.size).toBe(3);
    expect([...h].map(([n]) => n)).toEqual(["Set-Cookie", "X-CSTP-MTU", "set-cookie"]);
  });
  test("empty value still counts as present", () => {
    expect(new HeaderList([["X-Empty", ""]]).has("x-empty")).toBe(true);
  });
});

describe("detachedValue", () => {
  test("copies a header value byte for byte, obs-text included (the head is latin1)", () => {
    const head = parse("CONNECT /CSCOSSLC/tunnel HTTP/1.1\r\nUser-Agent: agent \xe9\xff 9.01\r\n");
    expect(head.ok).toBe(true);
    const value = head.ok ? head.value.headers.get("user-agent")! : "";
    expect(detachedValue(value)).toBe("agent \u00e9\u00ff 9.01");
    expect(detachedValue("")).toBe("");
  });
});

describe("parseRequestHead", () => {
  test("openconnect CONNECT head (docs/protocol.md §5.1)", () => {
    const r = parse(
      "CONNECT /CSCOSSLC/tunnel HTTP/1.1\r\nHost: vpn.pdoc.test:24443\r\nCookie: webvpn=abc\r\nX-CSTP-Version: 1\r\nX-CSTP-Base-MTU: 1400\r\n",
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.method).toBe("CONNECT");
    expect(r.value.target).toBe("/CSCOSSLC/tunnel");
    expect(r.value.version).toBe("HTTP/1.1");
    expect(r.value.headers.get("cookie")).toBe("webvpn=abc");
    expect(r.value.headers.get("x-cstp-base-mtu")).toBe("1400");
  });
  test("lone LF line ends and no trailing terminator", () => {
    const r = parse("GET / HTTP/1.0\nHost: a\nAccept: */*");
    expect(r.ok && r.value.version).toBe("HTTP/1.0");
    expect(r.ok && r.value.headers.get("accept")).toBe("*/*");
  });
  test("values trimmed of OWS, inner spaces kept, empty allowed", () => {
    const r = parse("GET / HTTP/1.1\r\nA: \t x  y \t\r\nB:\r\nC:z\r\n");
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.headers.get("a")).toBe("x  y");
    expect(r.value.headers.get("b")).toBe("");
    expect(r.value.headers.get("c")).toBe("z");
  });
  test("obs-text (latin1) in values is byte-transparent", () => {
    const r = parse("GET / HTTP/1.1\r\nX: caf\xe9\r\n");
    expect(r.ok && r.value.headers.get("x")).toBe("caf\xe9");
  });
  test("colon inside the value", () => {
    const r = parse("GET / HTTP/1.1\r\nHost: vpn:443\r\n");
    expect(r.ok && r.value.headers.get("host")).toBe("vpn:443");
  });
  test("all allowed methods", () => {
    for (const m of ALLOWED_METHODS) expect(parse(`${m} / HTTP/1.1\r\n`).ok).toBe(true);
  });
  test("absolute-form and query targets", () => {
    expect(parse("GET https://vpn/x?y=1 HTTP/1.1\r\n").ok).toBe(true);
  });

  test("method not allowed: 405 for known and unknown tokens, case-sensitive", () => {
    for (const m of ["PUT", "DELETE", "OPTIONS", "TRACE", "PATCH", "BREW", "get"]) {
      expectErr(`${m} / HTTP/1.1\r\n`, 405, "http_method_not_allowed");
    }
  });
  test("unsupported versions: 505", () => {
    expectErr("GET / HTTP/2.0\r\n", 505, "http_version_not_supported");
    expectErr("GET / HTTP/0.9\r\n", 505, "http_version_not_supported");
    expectErr("GET / HTTP/1.2\r\n", 505, "http_version_not_supported");
  });
  test("malformed request lines: 400", () => {
    for (const l of [
      "",
      "GET /",
      "GET  / HTTP/1.1",
      "GET / HTTP/1.1 ",
      " GET / HTTP/1.1",
      "GET / HTTP/1.1 x",
      "GET / http/1.1",
      "GET / HTTP/11",
      "GET / HTTP/1.10",
      "G@T / HTTP/1.1",
      "GET /\x7f HTTP/1.1",
      "GET /\xe9 HTTP/1.1",
      "GET\t/ HTTP/1.1",
    ]) {
      expectErr(`${l}\r\nHost: a\r\n`, 400, "http_bad_request_line");
    }
  });
  test("bad header lines: 400", () => {
    for (const l of ["NoColon", ": empty-name", "Bad Name: x", "Name : x", "Na\"me: x", "X: a\x01b", "X: a\x7fb", "X: a\x1bb"]) {
      expectErr(`GET / HTTP/1.1\r\n${l}\r\n`, 400, "http_bad_header");
    }
  });
  test("obs-fold is refused", () => {
    expectErr("GET / HTTP/1.1\r\nX: a\r\n  b\r\n", 400, "http_obs_fold");
    expectErr("GET / HTTP/1.1\r\n\tb\r\n", 400, "http_obs_fold");
    expectErr("GET / HTTP/1.1\r\n \r\nX: a\r\n", 400, "http_obs_fold");
  });
  test("NUL and bare CR are refused anywhere", () => {
    expectErr("GET / HTTP/1.1\r\nX: a\0b\r\n", 400, "http_bad_header");
    expectErr("GET /\0 HTTP/1.1\r\n", 400, "http_bad_header");
    expectErr("GET / HTTP/1.1\r\nX: a\rb\r\n", 400, "http_bad_header");
    expectErr("GET / HTTP/1.1\rX: a\r\n", 400, "http_bad_header");
    expectErr("GET / HTTP/1.1\r\nX: a\r", 400, "http_bad_header");
  });
  test("messages quote the offending text, bounded", () => {
    const r = parse(`GET ${"/".repeat(500)} HTTP/1.1 x\r\n`);
    expect(!r.ok && r.error.message.length).toBeLessThan(200);
  });
  test("UTF-8 bytes are read as latin1 chars", () => {
    const r = parseRequestHead(enc("GET / HTTP/1.1\r\nX: é\r\n"));
    expect(r.ok && r.value.headers.get("x")).toBe("\xc3\xa9");
  });
});
