import { describe, expect, test } from "bun:test";
import { FlowTable, OPENED_INBOUND, OPENED_OUTBOUND, TCP_IDLE_MS, UDP_IDLE_MS } from "../../../src/firewall/flow-table.ts";

describe("flow table", () => {
  test("a flow is found by its 5-tuple and not by a different one", () => {
    const t = new FlowTable(16);
    expect(t.open(6, 1, 2, 40000, 443, OPENED_OUTBOUND, 0)).toBe(true);
    expect(t.touch(6, 1, 2, 40000, 443, 10)).toBe(OPENED_OUTBOUND);
    expect(t.touch(17, 1, 2, 40000, 443, 10)).toBe(0);
    expect(t.touch(6, 1, 2, 40001, 443, 10)).toBe(0);
    expect(t.touch(6, 1, 3, 40000, 443, 10)).toBe(0);
  });

  test("idle expiry: UDP before TCP, refreshed by traffic", () => {
    const t = new FlowTable(16);
    t.open(6, 1, 2, 1, 22, OPENED_OUTBOUND, 0);
    t.open(17, 1, 2, 1, 53, OPENED_INBOUND, 0);
    expect(t.touch(17, 1, 2, 1, 53, UDP_IDLE_MS)).toBe(OPENED_INBOUND);
    expect(t.touch(17, 1, 2, 1, 53, 2 * UDP_IDLE_MS + 1)).toBe(0);
    expect(t.touch(6, 1, 2, 1, 22, 2 * UDP_IDLE_MS + 1)).toBe(OPENED_OUTBOUND);
    expect(t.touch(6, 1, 2, 1, 22, 2 * UDP_IDLE_MS + 2 + TCP_IDLE_MS)).toBe(0);
    t.sweep(2 * UDP_IDLE_MS + 2 + TCP_IDLE_MS);
    expect(t.size).toBe(0);
  });

  test("bounded: beyond the bound new flows are refused and counted, expired ones make room", () => {
    const t = new FlowTable(100);
    for (let i = 0; i < 100; i++) expect(t.open(17, 1, 2, i + 1, 53, OPENED_OUTBOUND, 0)).toBe(true);
    expect(t.open(17, 1, 2, 1000, 53, OPENED_OUTBOUND, 1)).toBe(false);
    expect(t.refusedFull).toBe(1);
    for (let i = 0; i < 100; i++) expect(t.touch(17, 1, 2, i + 1, 53, 2)).toBe(OPENED_OUTBOUND);
    expect(t.open(17, 1, 2, 1000, 53, OPENED_OUTBOUND, UDP_IDLE_MS + 10)).toBe(true);
    expect(t.size).toBe(1);
  });

  test("removeWhere keeps every other flow reachable (backward-shift deletion)", () => {
    const t = new FlowTable(4096);
    for (let i = 0; i < 3000; i++) t.open(6, 7, i * 7919, i, 80, OPENED_OUTBOUND, 0);
    expect(t.removeWhere((_p, _c, _peer, clientPort) => clientPort % 3 === 0)).toBe(1000);
    for (let i = 0; i < 3000; i++) expect(t.touch(6, 7, i * 7919, i, 80, 1)).toBe(i % 3 === 0 ? 0 : OPENED_OUTBOUND);
    t.flush();
    expect(t.touch(6, 7, 7919, 1, 80, 1)).toBe(0);
  });
});
