import { describe, expect, test } from "bun:test";
import { ReplayWindow } from "../../../../src/dtls/protocol/replay-window.ts";

describe("ReplayWindow (RFC 6347 §4.1.2.6)", () => {
  test("accepts new, rejects duplicates", () => {
    const w = new ReplayWindow();
    expect(w.checkAndMark(0)).toBe(true);
    expect(w.checkAndMark(0)).toBe(false);
    expect(w.checkAndMark(1)).toBe(true);
    expect(w.checkAndMark(5)).toBe(true);
    expect(w.checkAndMark(3)).toBe(true); // late but inside the window
    expect(w.checkAndMark(3)).toBe(false);
    expect(w.checkAndMark(4)).toBe(true);
    expect(w.highest).toBe(5);
  });

  test("64-entry window edge", () => {
    const w = new ReplayWindow();
    w.mark(100);
    expect(w.check(37)).toBe(true); // 100 - 63
    expect(w.check(36)).toBe(false); // 100 - 64
    w.mark(37);
    expect(w.check(37)).toBe(false);
    w.mark(101); // 37 leaves the window
    expect(w.check(37)).toBe(false);
    expect(w.check(38)).toBe(true);
  });

  test("large jumps clear the bitmap", () => {
    const w = new ReplayWindow();
    for (let s = 0; s < 64; s++) w.mark(s);
    w.mark(1000);
    for (let s = 937; s < 1000; s++) expect(w.check(s)).toBe(true);
    expect(w.check(1000)).toBe(false);
    w.mark(1010);
    for (let s = 1001; s < 1010; s++) expect(w.check(s)).toBe(true);
    expect(w.check(1000)).toBe(false);
  });

  test("48-bit sequence numbers and bad input", () => {
    const w = new ReplayWindow();
    const big = 2 ** 48 - 2;
    expect(w.checkAndMark(big)).toBe(true);
    expect(w.checkAndMark(big)).toBe(false);
    expect(w.checkAndMark(big + 1)).toBe(true);
    expect(w.check(-1)).toBe(false);
    expect(w.check(1.5)).toBe(false);
  });

  test("matches a reference set model on random traffic", () => {
    const w = new ReplayWindow();
    const seen = new Set<number>();
    let top = -1;
    let x = 12345;
    for (let i = 0; i < 20000; i++) {
      x = (x * 1103515245 + 12345) >>> 0;
      const seq = Math.max(0, top + ((x >>> 8) % 100) - 70);
      const expected = !seen.has(seq) && (seq > top || top - seq < 64);
      expect(w.check(seq)).toBe(expected);
      if (expected) {
        w.mark(seq);
        seen.add(seq);
        top = Math.max(top, seq);
      }
    }
  });
});
