import type { Result } from "../errors.ts";
import type { PasswordHasher, ThreadedPasswordHasher } from "./password-hasher.ts";

/**
 * Two password hashers in front of one another: a hash goes to `warm` when no hash is in flight
 * on either, else to `rest`, and to `rest` as well when `warm` fails (its thread died or could not
 * start).
 *
 * Why (docs/benchmarks.md, "The password hash kept warm"): Bun.password's native argon2id is the
 * faster one back to back, but its allocator gives the hash's 19 MiB back to the kernel 10 ms
 * after each hash, so a login after a quiet second faults all of it in again (about 4,870 page
 * faults: some 100 ms here, more CPU than the hash itself). A WebAssembly instance keeps its
 * memory and takes the same time after a quiet second as back to back, but about 10 ms more
 * than Bun.password's warm one. A lone login, the usual case, meets the warm thread; in a storm
 * the hashes go to Bun.password, whose memory stays in use while they come back to back.
 */
export function warmFirst(warm: ThreadedPasswordHasher, rest: PasswordHasher): ThreadedPasswordHasher {
  let inFlight = 0;
  const counted = async <T>(call: () => Promise<Result<T>>): Promise<Result<T>> => {
    inFlight++;
    try {
      return await call();
    } finally {
      inFlight--;
    }
  };
  const route = async <T>(onWarm: () => Promise<Result<T>>, onRest: () => Promise<Result<T>>): Promise<Result<T>> => {
    if (inFlight > 0) return counted(onRest);
    const answer = await counted(onWarm);
    return answer.ok ? answer : counted(onRest);
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
