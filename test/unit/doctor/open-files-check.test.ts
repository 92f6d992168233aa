import { describe, expect, test } from "bun:test";
import { checkOpenFiles } from "../../../src/doctor/open-files-check.ts";
import { descriptorBudget, limitForSessions } from "../../../src/serve/descriptor-budget.ts";

describe("the descriptor budget", () => {
  test("sessions get what the reserve and the handshakes in flight leave; never below one", () => {
    expect(descriptorBudget(20_000)).toEqual({ limit: 20_000, reserve: 96, unauthenticated: 1024, sessions: 18_880 });
    expect(descriptorBudget(300)).toEqual({ limit: 300, reserve: 96, unauthenticated: 37, sessions: 167 });
    expect(descriptorBudget(50).sessions).toBe(1);
  });

  test("limitForSessions is the smallest limit admitting that many", () => {
    for (const n of [2, 100, 167, 1000, 18_880, 50_000]) {
      const limit = limitForSessions(n);
      expect(descriptorBudget(limit).sessions).toBeGreaterThanOrEqual(n);
      expect(descriptorBudget(limit - 1).sessions).toBeLessThan(n);
    }
  });
});

describe("gw doctor: open files", () => {
  test("a hard limit too low for maxSessions fails with the systemd fix and the exact number", () => {
    const f = checkOpenFiles({ soft: 1024, hard: 1024 }, "gw serve (pid 7)", 5000);
    expect(f.status).toBe("fail");
    expect(f.detail).toBe("gw serve (pid 7): hard limit 1024 (soft 1024): room for 800 sessions, but maxSessions is 5000");
    expect(f.fix).toContain(`LimitNOFILE=${limitForSessions(5000)}`);
  });

  test("without maxSessions a small limit is a warning, a large one is fine", () => {
    expect(checkOpenFiles({ soft: 300, hard: 300 }, "this shell", undefined).status).toBe("warn");
    expect(checkOpenFiles({ soft: 1024, hard: 20_000 }, "this shell", undefined)).toEqual({
      check: "open files",
      status: "ok",
      detail: "this shell: hard limit 20000 (soft 1024): room for 18880 sessions",
    });
    expect(checkOpenFiles({ soft: 20_000, hard: 20_000 }, "this shell", 10_000).status).toBe("ok");
  });
});
