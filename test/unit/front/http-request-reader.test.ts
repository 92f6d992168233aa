import { describe, expect, test } from "bun:test";
import { createRequestReader, type ReaderEvent } from "../../../src/front/http-request-reader.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

const INIT_BODY = '<?xml version="1.0" encoding="UTF-8"?>\n<config-auth client="vpn" type="init"><version who="vpn">v9.01-3</version></config-auth>';
const POST = `POST / HTTP/1.1\r\nHost: vpn\r\nContent-Type: application/xml; charset=utf-8\r\nContent-Length: ${enc(INIT_BODY).length}\r\nX-Pad: 0000\r\n\r\n${INIT_BODY}`;
const CONNECT = "CONNECT /CSCOSSLC/tunnel HTTP/1.1\r\nHost: vpn\r\nCookie: webvpn=tok\r\nX-CSTP-Version: 1\r\n\r\n";

function requests(events: ReaderEvent[]) {
  return events.map((e) => {
    if (e.kind !== "request") throw new Error(`unexpected ${e.code}: ${e.message}`);
    return e.request;
  });
}
function onlyError(events: ReaderEvent[]) {
  expect(events.length).toBe(1);
  const e = events[0]!;
  if (e.kind !== "error") throw new Error("expected an error");
  return e;
}

describe("createRequestReader", () => {
  test("one POST with body", () => {
    const r = createRequestReader();
    const [req] = requests(r.push(enc(POST)));
    expect(req!.method).toBe("POST");
    expect(req!.headers.get("content-type")).toBe("application/xml; charset=utf-8");
    expect(dec(req!.body)).toBe(INIT_BODY);
    expect(r.state).toBe("head");
    expect(r.takeRemainder().length).toBe(0);
  });

  test("split at every byte position (head and body)", () => {
    const all = enc(POST);
    for (let cut = 0; cut <= all.length; cut++) {
      const r = createRequestReader();
      const events = [...r.push(all.subarray(0, cut)), ...r.push(all.subarray(cut))];
      const reqs = requests(events);
      expect(reqs.length).toBe(1);
      expect(dec(reqs[0]!.body)).toBe(INIT_BODY);
    }
  });

  test("one byte at a time", () => {
    const all = enc(POST + POST);
    const r = createRequestReader();
    const events: ReaderEvent[] = [];
    for (const b of all) events.push(...r.push(Uint8Array.of(b)));
    expect(requests(events).length).toBe(2);
  });

  test("pipelined requests in one chunk, in order", () => {
    const r = createRequestReader();
    const text = `GET /a HTTP/1.1\r\nHost: x\r\n\r\n${POST}GET /b HTTP/1.1\r\n\r\nPOST /auth HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET /c HTTP/1.1\r\n\r\n`;
    const reqs = requests(r.push(enc(text)));
    expect(reqs.map((q) => q.target)).toEqual(["/a", "/", "/b", "/auth", "/c"]);
    expect(dec(reqs[3]!.body)).toBe("abc");
    expect(reqs[0]!.body.length).toBe(0);
  });

  test("pipelined requests split across chunks at every position", () => {
    const all = enc(`${POST}GET /b HTTP/1.1\r\n\r\n${POST}`);
    for (let cut = 0; cut <= all.length; cut += 7) {
      const r = createRequestReader();
      const reqs = requests([...r.push(all.subarray(0, cut)), ...r.push(all.subarray(cut))]);
      expect(reqs.map((q) => q.target)).toEqual(["/", "/b", "/"]);
    }
  });

  test("lone LF line ends, and LF/CRLF mixed at the end of the head", () => {
    for (const text of ["GET / HTTP/1.1\nHost: a\n\n", "GET / HTTP/1.1\nHost: a\n\r\n", "GET / HTTP/1.1\r\nHost: a\r\n\n"]) {
      const r = createRequestReader();
      const reqs = requests(r.push(enc(text)));
      expect(reqs.length).toBe(1);
      expect(reqs[0]!.headers.get("host")).toBe("a");
    }
  });

  test("empty lines before a request line are skipped (RFC 9112 §2.2)", () => {
    const r = createRequestReader();
    const reqs = requests(r.push(enc(`POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi\r\n\nGET / HTTP/1.1\r\n\r\n`)));
    expect(reqs.map((q) => q.method)).toEqual(["POST", "GET"]);
  });

  test("body is a copy, not a view into the reader's buffer", () => {
    const r = createRequestReader();
    const [a] = requests(r.push(enc("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc")));
    r.push(enc("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nxyz"));
    expect(dec(a!.body)).toBe("abc");
  });

  test("a body of Content-Length 0, and equal repeated Content-Length values", () => {
    const r = createRequestReader();
    const reqs = requests(
      r.push(enc("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\nPOST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 02\r\n\r\nokPOST / HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\nz")),
    );
    expect(reqs.map((q) => dec(q.body))).toEqual(["", "ok", "z"]);
  });

  test("CONNECT stops parsing; takeRemainder returns the tunnel bytes", () => {
    const r = createRequestReader();
    const frame = Uint8Array.of(0x53, 0x54, 0x46, 0x01, 0x00, 0x00, 0x03, 0x00);
    const chunk = new Uint8Array([...enc(CONNECT), ...frame]);
    const reqs = requests(r.push(chunk));
    expect(reqs.length).toBe(1);
    expect(reqs[0]!.method).toBe("CONNECT");
    expect(reqs[0]!.headers.get("cookie")).toBe("webvpn=tok");
    expect(r.state).toBe("tunnel");
    // More data after CONNECT is buffered, never parsed as HTTP.
    expect(r.push(Uint8Array.of(0x07, 0x00, 0x00))).toEqual([]);
    expect([...r.takeRemainder()]).toEqual([...frame, 0x07, 0x00, 0x00]);
    expect(r.takeRemainder().length).toBe(0);
  });

  test("CONNECT after auth requests on the same connection", () => {
    const r = createRequestReader();
    const reqs = requests(r.push(enc(`${POST}${CONNECT}GARBAGE`)));
    expect(reqs.map((q) => q.method)).toEqual(["POST", "CONNECT"]);
    expect(dec(r.takeRemainder())).toBe("GARBAGE");
  });

  test("CONNECT split from its tunnel data at every position", () => {
    const all = enc(`${CONNECT}STF-bytes`);
    for (let cut = 0; cut <= all.length; cut++) {
      const r = createRequestReader();
      expect(requests([...r.push(all.subarray(0, cut)), ...r.push(all.subarray(cut))]).length).toBe(1);
      expect(dec(r.takeRemainder())).toBe("STF-bytes");
    }
  });

  test("takeRemainder mid-request returns the partial bytes and resets", () => {
    const r = createRequestReader();
    expect(r.push(enc("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab"))).toEqual([]);
    expect(r.state).toBe("body");
    expect(dec(r.takeRemainder())).toBe("ab");
    expect(r.state).toBe("head");
    expect(requests(r.push(enc("GET / HTTP/1.1\r\n\r\n"))).length).toBe(1);
  });

  test("large chunks grow the buffer correctly", () => {
    const body = "x".repeat(60000);
    const r = createRequestReader();
    const all = enc(`POST / HTTP/1.1\r\nContent-Length: ${body.length}\r\n\r\n${body}GET / HTTP/1.1\r\n\r\n`);
    const events: ReaderEvent[] = [];
    for (let i = 0; i < all.length; i += 1000) events.push(...r.push(all.subarray(i, i + 1000)));
    const reqs = requests(events);
    expect(reqs.length).toBe(2);
    expect(dec(reqs[0]!.body)).toBe(body);
  });

  describe("errors", () => {
    test("oversized head: 431, also before the end of the head arrives", () => {
      const r = createRequestReader({ maxHeadBytes: 100 });
      const e = onlyError(r.push(enc(`GET / HTTP/1.1\r\nX: ${"a".repeat(200)}`)));
      expect(e).toMatchObject({ status: 431, code: "http_head_too_large" });
      const r2 = createRequestReader({ maxHeadBytes: 100 });
      expect(onlyError(r2.push(enc(`GET / HTTP/1.1\r\nX: ${"a".repeat(90)}\r\n\r\n`)))).toMatchObject({ status: 431 });
    });
    test("head exactly at the limit passes", () => {
      const text = "GET / HTTP/1.1\r\nX: abc\r\n\r\n";
      expect(requests(createRequestReader({ maxHeadBytes: text.length }).push(enc(text))).length).toBe(1);
      expect(onlyError(createRequestReader({ maxHeadBytes: text.length - 1 }).push(enc(text))).status).toBe(431);
    });
    test("default head limit is 16384", () => {
      const r = createRequestReader();
      expect(onlyError(r.push(enc(`GET / HTTP/1.1\r\nX: ${"a".repeat(16400)}`))).status).toBe(431);
    });
    test("oversized body: 413 from the header alone", () => {
      const r = createRequestReader({ maxBodyBytes: 10 });
      expect(onlyError(r.push(enc("POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n")))).toMatchObject({ status: 413, code: "http_body_too_large" });
      expect(onlyError(createRequestReader().push(enc("POST / HTTP/1.1\r\nContent-Length: 65537\r\n\r\n"))).status).toBe(413);
      expect(onlyError(createRequestReader().push(enc(`POST / HTTP/1.1\r\nContent-Length: ${"9".repeat(30)}\r\n\r\n`))).status).toBe(413);
      expect(requests(createRequestReader({ maxBodyBytes: 10 }).push(enc("POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123456789"))).length).toBe(1);
    });
    test("bad Content-Length: 400", () => {
      for (const v of ["-1", "1.5", "abc", "", "0x10", "+5", "1 2", "1,2", "5, "]) {
        const e = onlyError(createRequestReader().push(enc(`POST / HTTP/1.1\r\nContent-Length: ${v}\r\n\r\n`)));
        expect(e).toMatchObject({ status: 400, code: "http_bad_content_length" });
      }
      const e = onlyError(createRequestReader().push(enc("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")));
      expect(e.code).toBe("http_bad_content_length");
    });
    test("Transfer-Encoding: 501; with Content-Length: 400", () => {
      expect(onlyError(createRequestReader().push(enc("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")))).toMatchObject({
        status: 501,
        code: "http_transfer_encoding_unsupported",
      });
      expect(onlyError(createRequestReader().push(enc("POST / HTTP/1.1\r\ntransfer-encoding: identity\r\n\r\n"))).status).toBe(501);
      expect(
        onlyError(createRequestReader().push(enc("POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"))),
      ).toMatchObject({ status: 400, code: "http_te_and_cl" });
    });
    test("CONNECT with a body: 400", () => {
      const e = onlyError(createRequestReader().push(enc("CONNECT /CSCOSSLC/tunnel HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd")));
      expect(e).toMatchObject({ status: 400, code: "http_connect_with_body" });
      expect(requests(createRequestReader().push(enc("CONNECT /x HTTP/1.1\r\nContent-Length: 0\r\n\r\n"))).length).toBe(1);
    });
    test("head errors pass through with their status", () => {
      expect(onlyError(createRequestReader().push(enc("PUT / HTTP/1.1\r\n\r\n")))).toMatchObject({ status: 405, code: "http_method_not_allowed" });
      expect(onlyError(createRequestReader().push(enc("GET / HTTP/2.0\r\n\r\n")))).toMatchObject({ status: 505 });
      expect(onlyError(createRequestReader().push(enc("GET /\r\n\r\n")))).toMatchObject({ status: 400, code: "http_bad_request_line" });
      expect(onlyError(createRequestReader().push(enc("GET / HTTP/1.1\r\nX: a\0\r\n\r\n")))).toMatchObject({ status: 400 });
      expect(onlyError(createRequestReader().push(enc("GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n")))).toMatchObject({ code: "http_obs_fold" });
    });
    test("bare CR before the request line", () => {
      expect(onlyError(createRequestReader().push(enc("\rGET / HTTP/1.1\r\n\r\n")))).toMatchObject({ status: 400 });
    });
    test("after an error the reader stays failed", () => {
      const r = createRequestReader();
      const events = r.push(enc("GET / HTTP/1.1\r\n\r\nBAD\r\n\r\nGET / HTTP/1.1\r\n\r\n"));
      expect(events.length).toBe(2);
      expect(events[0]!.kind).toBe("request");
      expect(events[1]!.kind).toBe("error");
      expect(r.state).toBe("failed");
      const again = r.push(enc("GET / HTTP/1.1\r\n\r\n"));
      expect(again).toEqual([events[1]!]);
    });
  });

  describe("bounded parse (maxEvents)", () => {
    const GET = "GET /nope HTTP/1.1\r\n\r\n";

    test("a chunk of thousands of pipelined requests yields at most maxEvents; the rest waits buffered", () => {
      const r = createRequestReader();
      const chunk = enc(GET.repeat(4000));
      const first = requests(r.push(chunk, 17));
      expect(first.length).toBe(17);
      expect(r.buffered).toBe(chunk.length - 17 * GET.length);
      expect(r.state).toBe("head");
    });

    test("an empty push continues where the bound stopped, in order, until all are read", () => {
      const r = createRequestReader();
      const text = Array.from({ length: 10 }, (_, i) => `GET /${i} HTTP/1.1\r\n\r\n`).join("");
      const seen = requests(r.push(enc(text), 3)).map((q) => q.target);
      for (let round = 0; round < 10 && r.buffered > 0; round++) seen.push(...requests(r.push(new Uint8Array(0), 3)).map((q) => q.target));
      expect(seen).toEqual(Array.from({ length: 10 }, (_, i) => `/${i}`));
      expect(r.buffered).toBe(0);
    });

    test("a bound below one still reads one request, so the caller always makes progress", () => {
      const r = createRequestReader();
      expect(requests(r.push(enc(GET + GET), 0)).length).toBe(1);
      expect(r.buffered).toBe(GET.length);
    });

    test("a held-back CONNECT still stops the parse and leaves the tunnel bytes for takeRemainder", () => {
      const r = createRequestReader();
      expect(requests(r.push(enc(`${GET}${CONNECT}STF\x01`), 1)).length).toBe(1);
      const [connect] = requests(r.push(new Uint8Array(0), 1));
      expect(connect!.method).toBe("CONNECT");
      expect(r.state).toBe("tunnel");
      expect(dec(r.takeRemainder())).toBe("STF\x01");
    });

    test("buffered counts a partial request", () => {
      const r = createRequestReader();
      expect(r.push(enc("GET / HT")).length).toBe(0);
      expect(r.buffered).toBe(8);
    });
  });
});
