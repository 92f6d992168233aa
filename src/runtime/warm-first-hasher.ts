import type { Result } from "../errors.ts";
import type { PasswordHasher } from "./password-hasher.ts";

/** A hasher whose memory stays in place between hashes, with its thread started ahead (the portable hasher, size 1). */
export interface WarmHasher extends PasswordHasher {
  prestart(): Result<number>;
  close(): void;
}

/**
 * Two password hashers in front of one another: a hash goes to `warm` when it has none in flight,
 * else to `rest`, and to `rest` as well when `warm` fails (its thread died or could not start).
 *
 * Why (docs/benchmarks.md, "The password hash kept warm"): Bun.password's native argon2id is the
 * faster one back to back, but its allocator gives the hash's 19 MiB back to the kernel 10 ms
 * after each hash, so a login after a quiet second faults all of it in again (about 4,870 page
 * faults: some 100 ms here, more CPU than the hash itself). A WebAssembly instance keeps its
 * memory and takes the same time after a quiet second as back to back. A lone login, the usual
 * case, meets the warm one; a storm spreads over both.
 */
export function warmFirst(warm: WarmHasher, rest: PasswordHasher): WarmHasher {
  let warmInFlight = 0;
  const route = async <T>(onWarm: () => Promise<Result<T>>, onRest: () => Promise<Result<T>>): Promise<Result<T>> => {
    if (warmInFlight > 0) return onRest();
    warmInFlight++;
    let answer: Result<T>;
    try {
      answer = await onWarm();
    } finally {
      warmInFlight--;
    }
    return answer.ok ? answer : onRest();
  };
  return {
    hash: (password, cost) =>
      route(
        () => warm.hash(password, cost),
        () => rest.hash(password, cost),
      ),
    verify: (password, phc) =>
      route(
        () => warm.verify(password, phc),
        () => rest.verify(password, phc),
      ),
    prestart: () => warm.prestart(),
    close: () => warm.close(),
  };
}
