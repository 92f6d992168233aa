import { describe, expect, test } from "bun:test";
import { AcceptGate } from "../../../src/front/accept-gate.ts";

function fixture(maxOpen: number, resumeWorks: () => boolean = () => true) {
  const calls: string[] = [];
  const gate: AcceptGate = new AcceptGate({
    maxOpen,
    pause: () => calls.push("pause"),
    // As the listener does: a failed listen is reported back (asynchronously there).
    resume: () => {
      calls.push("resume");
      if (resumeWorks()) gate.resumed();
      else gate.resumeFailed();
    },
    onPause: (open) => calls.push(`told ${open}`),
  });
  return { gate, calls };
}

describe("AcceptGate", () => {
  test("pauses once at maxOpen, resumes when 5 % is free again, and pauses again at the edge", () => {
    const { gate, calls } = fixture(100);
    for (let i = 0; i < 99; i++) gate.opened();
    expect(gate.isPaused).toBe(false);
    gate.opened();
    expect(calls).toEqual(["pause", "told 100"]);
    gate.opened(); // one already accepted by the runtime: counted, no second pause
    for (let i = 0; i < 5; i++) gate.closed();
    expect(gate.isPaused).toBe(true); // 96 open
    gate.closed();
    expect(calls).toEqual(["pause", "told 100", "resume"]);
    expect(gate.isPaused).toBe(false);
    for (let i = 0; i < 5; i++) gate.opened();
    expect(calls.slice(3)).toEqual(["pause", "told 100"]);
  });

  test("a resume that fails is retried with a growing delay until it works", async () => {
    let works = false;
    const { gate, calls } = fixture(20, () => works);
    for (let i = 0; i < 20; i++) gate.opened();
    for (let i = 0; i < 5; i++) gate.closed();
    const resumes = () => calls.filter((c) => c === "resume").length;
    expect(resumes()).toBe(1);
    await until(() => resumes() === 3); // retried after 100 ms, then 200 ms
    expect(gate.isPaused).toBe(true);
    works = true;
    await until(() => !gate.isPaused);
    expect(resumes()).toBe(4);
    gate.close();
  });
});

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await Bun.sleep(25);
  expect(condition()).toBe(true);
}
