import type { Result } from "../errors.ts";
import { serverBusy, type PasswordHasher } from "./password-hasher.ts";

/**
 * A hasher that already runs on a thread pool of its own (Bun.password), with a bound on the
 * calls in flight: beyond `max`, `server_busy` at once, so a login storm cannot queue without end.
 */
export function limitInFlight(inner: PasswordHasher, max: number): PasswordHasher {
  let inFlight = 0;
  const bounded = async <T>(call: () => Promise<Result<T>>): Promise<Result<T>> => {
    if (inFlight >= max) return serverBusy(inFlight);
    inFlight++;
    try {
      return await call();
    } finally {
      inFlight--;
    }
  };
  return {
    hash: (password, cost) => bounded(() => inner.hash(password, cost)),
    verify: (password, phc) => bounded(() => inner.verify(password, phc)),
  };
}
