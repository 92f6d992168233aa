import type { Result } from "../errors.ts";
import type { Argon2idCost, PasswordHasher } from "../runtime/password-hasher.ts";

/**
 * The hash an unknown name is checked against, so that a login for a name that does not exist
 * costs one verification too (timing tells nothing). Made once per cost (a changed setting makes
 * a new one, so unknown names cost what known ones with new hashes do); a failure is not kept.
 */
export class DummyHash {
  private made: { key: string; phc: Promise<Result<string>> } | undefined;

  constructor(
    private readonly hasher: () => PasswordHasher,
    private readonly cost: () => Argon2idCost,
    private readonly password: string,
  ) {}

  get(): Promise<Result<string>> {
    const cost = this.cost();
    const key = `${cost.memoryKiB}/${cost.passes}`;
    if (this.made?.key !== key) {
      const phc = this.hasher().hash(this.password, cost);
      const made = { key, phc };
      this.made = made;
      void phc.then((r) => {
        if (!r.ok && this.made === made) this.made = undefined;
      });
    }
    return this.made.phc;
  }
}
