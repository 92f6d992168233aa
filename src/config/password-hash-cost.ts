import type { z } from "zod";

/**
 * OWASP's argon2id table (Password Storage Cheat Sheet), one lane each, all "equivalent in
 * defence": 47104 KiB t=1, 19456 KiB t=2, 12288 KiB t=3, 9216 KiB t=4, 7168 KiB t=5. Their
 * memory x passes never drops below the last row's, so that product is the floor here: less
 * memory must be paid for with passes, and fewer passes with memory.
 */
export const OWASP_MIN_MEMORY_KIB = 7168;
export const OWASP_MIN_MEMORY_TIMES_PASSES = 7168 * 5;

type CostLike = { passwordHashMemoryKiB: number; passwordHashPasses: number };

/** Refuses a cost weaker than every row of OWASP's table (e.g. 19456 KiB with t=1). */
export function passwordHashCostStrongEnough(c: CostLike, ctx: z.RefinementCtx): void {
  const product = c.passwordHashMemoryKiB * c.passwordHashPasses;
  // Out of a row's own bounds: that row's issue says so already.
  if (c.passwordHashMemoryKiB < OWASP_MIN_MEMORY_KIB || c.passwordHashPasses < 1 || product >= OWASP_MIN_MEMORY_TIMES_PASSES) return;
  const passes = Math.ceil(OWASP_MIN_MEMORY_TIMES_PASSES / c.passwordHashMemoryKiB);
  ctx.addIssue({
    code: "custom",
    path: ["passwordHashPasses"],
    message:
      `argon2id with ${c.passwordHashMemoryKiB} KiB and ${c.passwordHashPasses} pass(es) is weaker than OWASP's weakest recommendation ` +
      `(memory x passes at least ${OWASP_MIN_MEMORY_TIMES_PASSES}): take passwordHashPasses ${passes} or more, or more memory`,
  });
}
