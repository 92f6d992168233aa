/** CSTP frame reading across TLS chunks, the hand-built ICMP echo, and how the runner splits the load. */
import { describe, expect, test } from "bun:test";
import { cstpFrame, CstpFrameReader, CstpType, DPD_REQUEST, LOGOUT } from "../../../scripts/bench/load/cstp-frames.ts";
import { echoRequest, isEchoReply } from "../../../scripts/bench/load/icmp-echo.ts";
import { parseSources, planProcesses, sourceOf, userOf } from "../../../scripts/bench/load/process-plan.ts";
import { parseRunOptions } from "../../../scripts/bench/load/run-options.ts";
import { SPREAD_SLOTS, TickSlots } from "../../../scripts/bench/load/tick-slots.ts";
import { HttpResponseReader } from "../../../scripts/bench/load/http-response-reader.ts";

describe("CSTP frames", () => {
  test("frames split anywhere across chunks come out whole and in order", () => {
    const stream = Buffer.concat([DPD_REQUEST, cstpFrame(CstpType.data, Uint8Array.of(0x45, 1, 2, 3, 4)), LOGOUT]);
    for (let cut = 1; cut < stream.length; cut++) {
      const seen: [number, number[]][] = [];
      const reader = new CstpFrameReader((t, p) => seen.push([t, Array.from(p)]));
      expect(reader.push(stream.subarray(0, cut))).toBeUndefined();
      expect(reader.push(stream.subarray(cut))).toBeUndefined();
      expect(seen.map(([t]) => t)).toEqual([CstpType.dpdRequest, CstpType.data, CstpType.disconnect]);
      expect(seen[1]![1]).toEqual([0x45, 1, 2, 3, 4]);
      expect(seen[2]![1][0]).toBe(0xb0);
    }
  });

  test("a header that is not STF is an error (openconnect ends the session too)", () => {
    const reader = new CstpFrameReader(() => {});
    expect(reader.push(Uint8Array.of(0x02, 0, 4, 1, 2, 3, 4, 5))).toContain("not a CSTP frame header");
  });
});

describe("ICMP echo", () => {
  const me = Uint8Array.of(10, 64, 0, 9);
  const gw = Uint8Array.of(10, 64, 0, 1);

  /** What the kernel answers: addresses swapped, type 0, checksums recomputed. */
  function reply(request: Uint8Array): Uint8Array {
    const r = Uint8Array.from(request);
    r.set(request.subarray(16, 20), 12);
    r.set(request.subarray(12, 16), 16);
    r[20] = 0;
    // ICMP checksum: type went 8 -> 0, so add 8 << 8 back into the one's-complement sum.
    let c = ((r[22]! << 8) | r[23]!) + 0x0800;
    c = (c & 0xffff) + (c >>> 16);
    r[22] = c >>> 8;
    r[23] = c & 0xff;
    return r;
  }

  test("the request is a valid IPv4 ICMP echo from the session to the target", () => {
    const p = echoRequest(me, gw, 77, 5);
    expect(p.length).toBe(44);
    expect([p[0], p[9], p[20]]).toEqual([0x45, 1, 8]);
    expect(Array.from(p.subarray(12, 20))).toEqual([...me, ...gw]);
    // A correct header checksum sums to 0xffff.
    let sum = 0;
    for (let i = 0; i < 20; i += 2) sum += (p[i]! << 8) | p[i + 1]!;
    while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
    expect(sum).toBe(0xffff);
  });

  test("its reply is recognised; another id, seq, sender or a damaged packet is not", () => {
    const r = reply(echoRequest(me, gw, 77, 5));
    expect(isEchoReply(r, me, gw, 77, 5)).toBe(true);
    expect(isEchoReply(r, me, gw, 77, 6)).toBe(false);
    expect(isEchoReply(r, me, gw, 78, 5)).toBe(false);
    expect(isEchoReply(r, me, Uint8Array.of(10, 64, 0, 2), 77, 5)).toBe(false);
    const damaged = Uint8Array.from(r);
    damaged[40] = damaged[40]! ^ 0xff;
    expect(isEchoReply(damaged, me, gw, 77, 5)).toBe(false);
  });
});

describe("splitting the load", () => {
  test("sources: a last-octet range, a list, or bad input with a reason", () => {
    expect(parseSources("203.0.113.10-203.0.113.12")).toEqual(["203.0.113.10", "203.0.113.11", "203.0.113.12"]);
    expect(parseSources("203.0.113.10-12,127.0.0.1")).toEqual(["203.0.113.10", "203.0.113.11", "203.0.113.12", "127.0.0.1"]);
    expect(parseSources("203.0.113.12-203.0.113.10")).toContain("bad address range");
    expect(parseSources("example.com")).toContain("not an IPv4 address");
  });

  test("every session goes to exactly one process; users and sources rotate; per-source logins stay under the gateway's cap", () => {
    const plans = planProcesses({
      sessions: 10, processes: 3, concurrency: 50, host: "h", port: 443, path: "/", sources: ["a", "b"], userPrefix: "load", users: 4,
      password: "p", dtls: "psk", pingIntervalMs: 60_000, setupTimeoutMs: 60_000, churnSeconds: 0, ticks: "spread",
    });
    expect(plans.flatMap((p) => p.indexes).sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(plans.map((p) => p.concurrency)).toEqual([17, 17, 17]);
    expect(plans[0]!.perSourceLimit * 3).toBeLessThan(32);
    expect([userOf(plans[0]!, 5), sourceOf(plans[0]!, 5)]).toEqual(["load1", "b"]);
    expect(plans.every((p) => p.ticks === "spread")).toBe(true);
  });

  test("ticks: together, one slot a second for all; spread, session i in slot i mod 200 of 5 ms, each slot in turn", () => {
    const together = new TickSlots<string>("together");
    together.add("a", 0);
    together.add("b", 7);
    expect([together.intervalMs, [...together.due()], [...together.due()]]).toEqual([1000, ["a", "b"], ["a", "b"]]);
    const spread = new TickSlots<string>("spread");
    expect(spread.intervalMs).toBe(5);
    spread.add("s0", 0);
    spread.add("s1", 1);
    spread.add("s201", 201);
    spread.add("s400", 400);
    const turns = Array.from({ length: SPREAD_SLOTS + 2 }, () => [...spread.due()]);
    expect(turns.slice(0, 3)).toEqual([["s0", "s400"], ["s1", "s201"], []]);
    expect(turns.flat().length).toBe(8); // each once a second, then slots 0 and 1 come round again
    spread.delete("s201", 201);
    for (let i = 0; i < SPREAD_SLOTS - 1; i++) spread.due();
    expect([...spread.due()]).toEqual(["s1"]);
  });

  test("options: the password may come from LOAD_PASSWORD; mistakes are named", () => {
    const o = parseRunOptions(["--url", "https://203.0.113.1:8443/grp", "--sessions", "5", "--sources", "203.0.113.10-11"], { LOAD_PASSWORD: "pw" });
    if (!o.ok) throw o.error;
    expect([o.value.host, o.value.port, o.value.path, o.value.password, o.value.sources.length, o.value.dtls, o.value.ticks]).toEqual(["203.0.113.1", 8443, "/grp", "pw", 2, "psk", "spread"]);
    const together = parseRunOptions(["--url", "https://h/", "--password", "p", "--ticks", "together"], {});
    expect(together.ok && together.value.ticks).toBe("together");
    expect(o.value.gwGc).toBe("sigusr2");
    // Another gateway (ocserv) is not sent gw's SIGUSR2.
    const other = parseRunOptions(["--url", "https://h/", "--password", "p", "--gw-gc", "none"], {});
    expect(other.ok && other.value.gwGc).toBe("none");
    const badGc = parseRunOptions(["--url", "https://h/", "--password", "p", "--gw-gc", "sigkill"], {});
    expect(!badGc.ok && badGc.error.message).toMatch(/--gw-gc/);
    const badTicks = parseRunOptions(["--url", "https://h/", "--password", "p", "--ticks", "random"], {});
    expect(!badTicks.ok && badTicks.error.message).toMatch(/ticks/);
    const bad = parseRunOptions(["--url", "https://h/", "--dtls", "tls"], {});
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error.message).toMatch(/--dtls.*\n?.*--password/s);
  });
});

describe("HTTP answers on the tunnel connection", () => {
  test("a login answer with its body, then the CONNECT head with the first frames left over", () => {
    const r = new HttpResponseReader();
    const body = "<config-auth/>";
    r.push(Buffer.from(`HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`));
    expect(r.takeResponse()).toBeUndefined();
    r.push(Buffer.from(`${body.slice(5)}HTTP/1.1 200 CONNECTED\r\nX-CSTP-MTU: 1400\r\n\r\n`));
    const first = r.takeResponse();
    if (!first || typeof first === "string") throw new Error(String(first));
    expect([first.status, first.body, first.headers.get("set-cookie")]).toEqual([200, body, ["a=1", "b=2"]]);
    r.push(DPD_REQUEST);
    const head = r.takeHead();
    if (!head || typeof head === "string") throw new Error(String(head));
    expect(head.head).toBe("HTTP/1.1 200 CONNECTED\r\nX-CSTP-MTU: 1400");
    expect(Array.from(r.rest())).toEqual(Array.from(DPD_REQUEST));
  });
});
