import { describe, expect, test } from "bun:test";
import { formatConnectResponse, formatResponse } from "../../../src/front/http-response.ts";

const dec = (b: Uint8Array) => new TextDecoder().decode(b);

describe("formatResponse", () => {
  test("status line, headers in order and case, Content-Length, body", () => {
    const out = formatResponse({
      status: 200,
      reason: "OK",
      headers: [
        ["Content-Type", "text/xml"],
        ["X-Transcend-Version", "1"],
        ["Set-Cookie", "webvpn=abc; Secure; HttpOnly"],
        ["set-cookie", "webvpnc=; path=/"],
      ],
      body: "<auth id=\"success\"/>",
    });
    expect(dec(out)).toBe(
      'HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\nX-Transcend-Version: 1\r\nSet-Cookie: webvpn=abc; Secure; HttpOnly\r\nset-cookie: webvpnc=; path=/\r\nContent-Length: 20\r\n\r\n<auth id="success"/>',
    );
  });
  test("Content-Length counts UTF-8 bytes", () => {
    const out = dec(formatResponse({ status: 200, reason: "OK", headers: [], body: "é€" }));
    expect(out).toBe("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\né€");
  });
  test("binary body", () => {
    const out = formatResponse({ status: 200, reason: "OK", headers: [], body: Uint8Array.of(0, 1, 255) });
    expect([...out.subarray(out.length - 3)]).toEqual([0, 1, 255]);
    expect(dec(out.subarray(0, out.length - 3))).toBe("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n");
  });
  test("no body: Content-Length: 0 so keep-alive clients don't wait", () => {
    expect(dec(formatResponse({ status: 404, reason: "Not Found", headers: [["Connection", "close"]] }))).toBe(
      "HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
    );
    expect(dec(formatResponse({ status: 200, reason: "OK", headers: [], body: "" }))).toBe("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  });
  test("1xx/204/304 get no Content-Length", () => {
    expect(dec(formatResponse({ status: 204, reason: "No Content", headers: [] }))).toBe("HTTP/1.1 204 No Content\r\n\r\n");
    expect(dec(formatResponse({ status: 304, reason: "Not Modified", headers: [] }))).toBe("HTTP/1.1 304 Not Modified\r\n\r\n");
    expect(() => formatResponse({ status: 204, reason: "No Content", headers: [], body: "x" })).toThrow();
  });
  test("caller's own Content-Length (HEAD) is kept, not duplicated", () => {
    expect(dec(formatResponse({ status: 200, reason: "OK", headers: [["Content-Length", "42"]] }))).toBe("HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n");
    expect(dec(formatResponse({ status: 200, reason: "OK", headers: [["content-length", "2"]], body: "hi" }))).toBe(
      "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhi",
    );
    expect(() => formatResponse({ status: 200, reason: "OK", headers: [["Content-Length", "3"]], body: "hi" })).toThrow();
  });
  test("a 401 like ocserv's", () => {
    expect(dec(formatResponse({ status: 401, reason: "Authentication failed", headers: [] }))).toStartWith("HTTP/1.1 401 Authentication failed\r\n");
  });
  test("header injection and bad input throw", () => {
    expect(() => formatResponse({ status: 200, reason: "OK", headers: [["X-A", "a\r\nSet-Cookie: evil=1"]] })).toThrow();
    expect(() => formatResponse({ status: 200, reason: "OK", headers: [["X-A", "a\nb"]] })).toThrow();
    expect(() => formatResponse({ status: 200, reason: "OK", headers: [["X-A", "a\0b"]] })).toThrow();
    expect(() => formatResponse({ status: 200, reason: "OK", headers: [["X A", "v"]] })).toThrow();
    expect(() => formatResponse({ status: 200, reason: "OK", headers: [["", "v"]] })).toThrow();
    expect(() => formatResponse({ status: 200, reason: "O\r\nK", headers: [] })).toThrow();
    expect(() => formatResponse({ status: 99, reason: "x", headers: [] })).toThrow();
    expect(() => formatResponse({ status: 600, reason: "x", headers: [] })).toThrow();
    expect(() => formatResponse({ status: 200.5, reason: "x", headers: [] })).toThrow();
  });
  test("tabs and trailing spaces in values are written as given", () => {
    expect(dec(formatResponse({ status: 200, reason: "OK", headers: [["X-A", "a\tb "]] }))).toContain("X-A: a\tb \r\n");
  });
});

describe("formatConnectResponse", () => {
  test("exact bytes, case preserved, no Content-Length (docs/protocol.md §5.2)", () => {
    const out = dec(
      formatConnectResponse([
        ["X-CSTP-Version", "1"],
        ["X-CSTP-Address", "10.123.0.50"],
        ["X-CSTP-DNS", "10.123.0.1"],
        ["X-CSTP-DNS", "fd12:3456:789a::1"],
        ["X-CSTP-MTU", "1334"],
        ["X-DTLS12-CipherSuite", "AES256-GCM-SHA384"],
      ]),
    );
    expect(out).toBe(
      "HTTP/1.1 200 CONNECTED\r\nX-CSTP-Version: 1\r\nX-CSTP-Address: 10.123.0.50\r\nX-CSTP-DNS: 10.123.0.1\r\nX-CSTP-DNS: fd12:3456:789a::1\r\nX-CSTP-MTU: 1334\r\nX-DTLS12-CipherSuite: AES256-GCM-SHA384\r\n\r\n",
    );
    expect(out.slice(0, 13)).toBe("HTTP/1.1 200 ");
    expect(out.toLowerCase()).not.toContain("content-length");
  });
  test("no headers", () => {
    expect(dec(formatConnectResponse([]))).toBe("HTTP/1.1 200 CONNECTED\r\n\r\n");
  });
  test("injection throws", () => {
    expect(() => formatConnectResponse([["X-CSTP-Banner", "hi\r\n\r\nSTF"]])).toThrow();
  });
});
