import { describe, expect, test } from "bun:test";
import { gatewaySettingsSchema } from "../../../src/config/gateway-config.ts";

const issuesOf = (doc: Record<string, unknown>) => {
  const r = gatewaySettingsSchema.safeParse(doc);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
};

describe("the argon2id settings for new password hashes", () => {
  test("default to OWASP's 19456 KiB with 2 passes", () => {
    const d = gatewaySettingsSchema.parse({});
    expect([d.passwordHashMemoryKiB, d.passwordHashPasses]).toEqual([19456, 2]);
  });

  test("take every row of OWASP's table", () => {
    for (const [m, t] of [[47104, 1], [19456, 2], [12288, 3], [9216, 4], [7168, 5]]) {
      expect(issuesOf({ passwordHashMemoryKiB: m, passwordHashPasses: t })).toEqual([]);
    }
  });

  test("refuse weaker costs, saying how many passes would do", () => {
    expect(issuesOf({ passwordHashMemoryKiB: 19456, passwordHashPasses: 1 })).toEqual([
      expect.stringMatching(/^passwordHashPasses: .*weaker than OWASP.*passwordHashPasses 2 or more/),
    ]);
    expect(issuesOf({ passwordHashMemoryKiB: 4096, passwordHashPasses: 10 })).toEqual([expect.stringMatching(/^passwordHashMemoryKiB: /)]);
    expect(issuesOf({ passwordHashPasses: 0 })).toEqual([expect.stringMatching(/^passwordHashPasses: /)]);
  });

  test("refuse more than a stored hash may ask for (a new hash must verify)", () => {
    expect(issuesOf({ passwordHashMemoryKiB: 262145 })).toEqual([expect.stringMatching(/^passwordHashMemoryKiB: /)]);
    expect(issuesOf({ passwordHashPasses: 17 })).toEqual([expect.stringMatching(/^passwordHashPasses: /)]);
  });
});
