/**
 * The login front's queue and back-pressure, driven through a socket double (no network, no
 * timers that matter: the deadlines are set far away). The time-outs themselves are checked
 * against a real gw serve in test/integration/serve-hostile-clients.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { EventEmitter } from "node:events";
import type { TLSSocket } from "node:tls";
import { FrontCounters } from "../../../src/front/front-counters.ts";
import { FRONT_LIMITS } from "../../../src/front/front-limits.ts";
import { serveConnection, type TunnelFront } from "../../../src/front/http-connection.ts";

/** Records what the connection does to its socket; write() answers "buffer full" when told to. */
class SocketDouble extends EventEmitter {
  remoteAddress = "203.0.113.2";
  remotePort = 50000;
  written: string[] = [];
  paused = false;
  ended = false;
  destroyed = false;
  writeReturns = true;
  noDelay = false;
  setNoDelay(on = true): this {
    this.noDelay = on;
    return this;
  }
  write(data: Uint8Array): boolean {
    this.written.push(new TextDecoder().decode(data));
    return this.writeReturns;
  }
  pause(): this {
    this.paused = true;
    return this;
  }
  resume(): this {
    this.paused = false;
    return this;
  }
  end(): void {
    this.ended = true;
  }
  destroy(): void {
    this.destroyed = true;
    this.emit("close");
  }
  statuses(): number[] {
    return this.written.map((w) => Number(w.split(" ")[1]));
  }
}

const FAR = 3_600_000; // deadlines out of the way of these tests
const limits = { ...FRONT_LIMITS, firstRequestMs: FAR, headMs: FAR, bodyMs: FAR, idleMs: FAR, sendMs: FAR, closeGraceMs: FAR };

function connection() {
  const socket = new SocketDouble();
  const counters = new FrontCounters();
  let released = 0;
  // Only the 404 route is used: the rest of the front is never touched.
  const front = { counters, limits, plane: { log: () => {} } } as unknown as TunnelFront;
  serveConnection(socket as unknown as TLSSocket, front, { release: () => released++ });
  const send = (text: string) => socket.emit("data", Buffer.from(text));
  const settle = () => new Promise((r) => setTimeout(r, 0));
  return { socket, counters, send, settle, released: () => released };
}

const GET = "GET /nope HTTP/1.1\r\n\r\n";

describe("serveConnection: queue and back-pressure", () => {
  test("one chunk pipelining past the queue: the queued requests are answered in order, then 429 and close", async () => {
    const c = connection();
    c.send(GET.repeat(4000));
    expect(c.socket.paused).toBe(true); // nothing more is read while answers are pending
    await c.settle();
    expect(c.socket.statuses()).toEqual([...Array(limits.maxQueuedRequests).fill(404), 429]);
    expect(c.socket.written.at(-1)).toContain("Connection: close");
    expect(c.socket.ended).toBe(true);
    expect(c.counters.refused.get("too_many_requests")).toBe(1);
    c.send(GET.repeat(100)); // ignored after the overflow
    await c.settle();
    expect(c.socket.written.length).toBe(limits.maxQueuedRequests + 1);
  });

  test("answers leave at once: TCP_NODELAY is on from the first request, not only in the tunnel", () => {
    // Nagle's algorithm held an answer behind an unacknowledged segment until the client's delayed
    // ACK: about 40 ms more per login under Deno, whose sockets start with it on.
    expect(connection().socket.noDelay).toBe(true);
  });

  test("a few pipelined requests are all answered and reading resumes", async () => {
    const c = connection();
    c.send(GET.repeat(5));
    await c.settle();
    expect(c.socket.statuses()).toEqual([404, 404, 404, 404, 404]);
    expect(c.socket.paused).toBe(false);
    expect(c.socket.ended).toBe(false);
  });

  test("unsent answers pause reading until 'drain'", async () => {
    const c = connection();
    c.socket.writeReturns = false;
    c.send(GET);
    await c.settle();
    expect(c.socket.statuses()).toEqual([404]);
    expect(c.socket.paused).toBe(true);
    c.socket.writeReturns = true;
    c.socket.emit("drain");
    expect(c.socket.paused).toBe(false);
  });

  test("the admission slot is released when the connection closes", () => {
    const c = connection();
    c.socket.destroy();
    expect(c.released()).toBe(1);
  });
});
