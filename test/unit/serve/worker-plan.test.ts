import { describe, expect, test } from "bun:test";
import { AUTO_WORKERS_MAX, describeProcesses, planWorkers } from "../../../src/serve/worker-plan.ts";

describe("planWorkers", () => {
  test("1 is one process, whatever the cores and settings", () => {
    expect(planWorkers({ requested: 1, cores: 8, unsupported: ["SAML"] })).toEqual({ kind: "one" });
  });

  test("a number above 1 is taken as given, or refused with what the workers cannot carry", () => {
    expect(planWorkers({ requested: 3, cores: 2, unsupported: [] })).toEqual({ kind: "workers", count: 3, auto: false });
    expect(planWorkers({ requested: 2, cores: 8, unsupported: ["SAML", "DTLS under this runtime"] })).toEqual({ kind: "refused", unsupported: ["SAML", "DTLS under this runtime"] });
  });

  test("auto (0) takes one worker per core, at most AUTO_WORKERS_MAX", () => {
    expect(planWorkers({ requested: 0, cores: 2, unsupported: [] })).toEqual({ kind: "workers", count: 2, auto: true });
    expect(planWorkers({ requested: 0, cores: 96, unsupported: [] })).toEqual({ kind: "workers", count: AUTO_WORKERS_MAX, auto: true });
  });

  test("auto falls back to one process, with the reason, instead of refusing", () => {
    expect(planWorkers({ requested: 0, cores: 1, unsupported: [] })).toEqual({ kind: "one", reason: "auto: one core" });
    expect(planWorkers({ requested: 0, cores: 4, unsupported: ["SAML", "client certificates (clientCaFile)"] })).toEqual({
      kind: "one",
      reason: "auto: workers cannot run with SAML, client certificates (clientCaFile)",
    });
  });
});

describe("describeProcesses (the ready line's words)", () => {
  test("names the count, and auto", () => {
    expect(describeProcesses({ kind: "workers", count: 2, auto: false })).toBe("2 worker processes");
    expect(describeProcesses({ kind: "workers", count: 4, auto: true })).toBe("4 worker processes (auto: one per core)");
  });

  test("one process says why when auto chose it", () => {
    expect(describeProcesses({ kind: "one" })).toBe("one process");
    expect(describeProcesses({ kind: "one", reason: "auto: one core" })).toBe("one process (auto: one core)");
    expect(describeProcesses({ kind: "workers", count: 2, auto: true }, "auto: steering_unavailable, see above")).toBe("one process (auto: steering_unavailable, see above)");
  });
});
