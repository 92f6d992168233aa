import type { PasswordHasher } from "../password-hasher.ts";

/** Bun's native argon2id (64 MiB, t=2, p=1: OWASP's recommended minimum is 19 MiB, t=2). */
export const bunPasswordHasher: PasswordHasher = {
  hash: (password) => Bun.password.hash(password, { algorithm: "argon2id", memoryCost: 65536, timeCost: 2 }),
  verify: async (password, phc) => {
    try {
      return await Bun.password.verify(password, phc);
    } catch {
      return false; // a malformed stored hash never authenticates
    }
  },
};
