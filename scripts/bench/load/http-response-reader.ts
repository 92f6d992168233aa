/**
 * Reads HTTP/1.1 responses from a byte stream that later turns into CSTP frames: a response head,
 * then a Content-Length body (login answers), or only the head (the CONNECT answer, after which
 * the leftover bytes are already tunnel frames).
 */
export interface HttpResponse {
  status: number;
  /** Status line and headers, without the empty line. */
  head: string;
  /** Header values by lower-case name, in order. */
  headers: Map<string, string[]>;
  body: string;
}

export class HttpResponseReader {
  private buffer = Buffer.alloc(0);

  push(chunk: Uint8Array): void {
    this.buffer = this.buffer.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.buffer, chunk]);
  }

  /** A whole response with its body, or undefined until it has arrived; an error text for what cannot be read. */
  takeResponse(): HttpResponse | string | undefined {
    const head = this.takeHeadText(false);
    if (head === undefined) return undefined;
    const parsed = parseHead(head);
    if (typeof parsed === "string") return parsed;
    if (parsed.headers.has("transfer-encoding")) return "chunked answers are not supported by the load generator";
    const length = Number(parsed.headers.get("content-length")?.[0] ?? "0");
    if (!Number.isInteger(length) || length < 0) return `bad Content-Length in: ${parsed.head.split("\r\n")[0]}`;
    const start = head.length + 4;
    if (this.buffer.length < start + length) return undefined;
    parsed.body = this.buffer.subarray(start, start + length).toString("utf8");
    this.buffer = this.buffer.subarray(start + length);
    return parsed;
  }

  /** The head of a CONNECT answer (no body); what follows stays for `rest()`. */
  takeHead(): HttpResponse | string | undefined {
    const head = this.takeHeadText(true);
    return head === undefined ? undefined : parseHead(head);
  }

  /** Bytes after what was taken (tunnel frames after the CONNECT answer). */
  rest(): Uint8Array {
    const r = this.buffer;
    this.buffer = Buffer.alloc(0);
    return r;
  }

  private takeHeadText(consume: boolean): string | undefined {
    const end = this.buffer.indexOf("\r\n\r\n");
    if (end < 0) return undefined;
    const text = this.buffer.subarray(0, end).toString("latin1");
    if (consume) this.buffer = this.buffer.subarray(end + 4);
    return text;
  }
}

function parseHead(head: string): HttpResponse | string {
  const lines = head.split("\r\n");
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "");
  if (!m) return `not an HTTP answer: ${JSON.stringify(lines[0]?.slice(0, 80))}`;
  const headers = new Map<string, string[]>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).toLowerCase();
    const list = headers.get(name) ?? [];
    list.push(line.slice(colon + 1).trim());
    headers.set(name, list);
  }
  return { status: Number(m[1]), head, headers, body: "" };
}
