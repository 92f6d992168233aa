import { describe, expect, test } from "bun:test";
import { DeadPeerDetector, PEER_ALIVE, PEER_DEAD, PEER_PROBE } from "../../../src/tunnel/dead-peer-detector.ts";

/** A fake clock in ms; the detector is asked each second, as the data plane's tick does. */
function run(dpdSeconds: number, lastRx: (t: number) => number, untilMs: number) {
  const detector = new DeadPeerDetector(dpdSeconds);
  const probes: number[] = [];
  let deadAt: number | undefined;
  for (let t = 0; t <= untilMs && deadAt === undefined; t += 1000) {
    const verdict = detector.check(t, lastRx(t));
    if (verdict === PEER_PROBE) probes.push(t);
    if (verdict === PEER_DEAD) deadAt = t;
  }
  return { probes, deadAt };
}

describe("DeadPeerDetector", () => {
  test("a silent peer: probed once past 2·DPD, dead past 3·DPD", () => {
    const { probes, deadAt } = run(10, () => 0, 60_000);
    expect(probes).toEqual([21_000]);
    expect(deadAt).toBe(31_000);
  });

  test("probes repeat at most once per DPD while the silence lasts", () => {
    const detector = new DeadPeerDetector(10);
    expect(detector.check(20_500, 0)).toBe(PEER_PROBE);
    expect(detector.check(25_000, 0)).toBe(PEER_ALIVE);
    // A frame at 5 s: still over 2·DPD of silence at 26 s, but the last probe is not a DPD old.
    expect(detector.check(26_000, 5_000)).toBe(PEER_ALIVE);
    expect(detector.check(30_500, 5_000)).toBe(PEER_ALIVE); // exactly one DPD after the probe: not yet
    expect(detector.check(30_600, 5_000)).toBe(PEER_PROBE);
    expect(detector.check(35_001, 5_000)).toBe(PEER_DEAD);
  });

  test("any frame is life: a peer that answers is never declared dead", () => {
    // The peer answers each probe 2 s later.
    let heard = 0;
    const detector = new DeadPeerDetector(10);
    let dead = false;
    for (let t = 0; t <= 300_000; t += 1000) {
      const verdict = detector.check(t, heard);
      if (verdict === PEER_PROBE) heard = t + 2000;
      if (verdict === PEER_DEAD) dead = true;
    }
    expect(dead).toBe(false);
  });

  test("DPD 0 turns it off", () => {
    expect(run(0, () => 0, 10_000_000)).toEqual({ probes: [], deadAt: undefined });
  });
});
