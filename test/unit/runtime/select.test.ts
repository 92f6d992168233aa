import { describe, expect, test } from "bun:test";
import { loadRuntime, runtimeName } from "../../../src/runtime/select.ts";

describe("runtime selection", () => {
  test("names the runtime from its global", () => {
    expect(runtimeName({ Bun: {} })).toBe("bun");
    expect(runtimeName({ Deno: {} })).toBe("deno");
    expect(runtimeName({})).toBeNull();
  });

  test("the runtime this test runs on loads its own adapter set", async () => {
    const loaded = await loadRuntime();
    expect(loaded.ok).toBe(true);
    if (loaded.ok) expect(loaded.value.name).toStartWith(runtimeName()!);
  });

  test("any other runtime gets runtime_unsupported with one line that says what to run instead", async () => {
    const loaded = await loadRuntime({});
    expect(loaded.ok).toBe(false);
    if (!loaded.ok) {
      expect(loaded.error.code).toBe("runtime_unsupported");
      expect(loaded.error.message).toContain("gw runs on Bun or Deno");
      expect(loaded.error.message).not.toContain("\n");
    }
  });
});
