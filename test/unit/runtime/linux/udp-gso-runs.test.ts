import { describe, expect, test } from "bun:test";
import { GSO_MAX_PAYLOAD, GSO_MAX_SEGMENTS, gsoRunLength } from "../../../../src/runtime/linux/udp-gso-runs.ts";

type Entry = [length: number, port: number, address: string];
const flat = (entries: Entry[]) => entries.flatMap(([length, port, address]) => [new Uint8Array(length), port, address]);
/** Every run from the start, as gsoRunLength cuts the batch. */
function runs(entries: Entry[]): number[] {
  const batch = flat(entries);
  const out: number[] = [];
  for (let i = 0; i < entries.length; i += out[out.length - 1]!) out.push(gsoRunLength(batch, i));
  return out;
}
const same = (n: number, length = 1400, port = 443, address = "203.0.113.5"): Entry[] => Array.from({ length: n }, () => [length, port, address]);

describe("gsoRunLength", () => {
  test("same size, same peer: one run; a shorter datagram ends it, a longer one starts another", () => {
    expect(runs(same(5))).toEqual([5]);
    expect(runs([...same(3), [700, 443, "203.0.113.5"], ...same(2)])).toEqual([4, 2]);
    expect(runs([...same(3, 700), ...same(2, 1400)])).toEqual([3, 2]);
  });

  test("another port or address ends a run; order is never rearranged", () => {
    expect(runs([...same(2), ...same(2, 1400, 444), ...same(2, 1400, 443, "203.0.113.6"), ...same(1)])).toEqual([2, 2, 2, 1]);
    expect(runs([[1400, 443, "203.0.113.5"], [1400, 443, "203.0.113.6"], [1400, 443, "203.0.113.5"]])).toEqual([1, 1, 1]);
  });

  test("at most 64 segments and 65,507 bytes of payload in one run", () => {
    expect(runs(same(150, 100))).toEqual([GSO_MAX_SEGMENTS, GSO_MAX_SEGMENTS, 150 - 2 * GSO_MAX_SEGMENTS]);
    const perRun = Math.floor(GSO_MAX_PAYLOAD / 1400); // 46
    expect(runs(same(100))).toEqual([perRun, perRun, 100 - 2 * perRun]);
    expect(perRun * 1400).toBeLessThanOrEqual(GSO_MAX_PAYLOAD);
    expect(runs(same(3, 40_000))).toEqual([1, 1, 1]);
  });

  test("empty datagrams never join a run", () => {
    expect(runs([...same(2), [0, 443, "203.0.113.5"], ...same(1)])).toEqual([2, 1, 1]);
    expect(runs([[0, 443, "203.0.113.5"], [0, 443, "203.0.113.5"]])).toEqual([1, 1]);
  });
});
