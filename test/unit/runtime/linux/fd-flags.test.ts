import { expect, test } from "bun:test";
import { ensureNonBlocking, type FcntlLibc } from "../../../../src/runtime/linux/fd-flags.ts";
import { F_GETFL, F_SETFL, O_NONBLOCK, O_RDWR } from "../../../../src/runtime/linux/tun-libc.ts";

/** One descriptor's status flags, with fcntl failing on request. */
function fakeFcntl(flags: number, fail: "get" | "set" | "" = "") {
  const state = { flags, sets: 0 };
  const libc: FcntlLibc = {
    fcntl: (_fd, command, arg) => {
      if (command === F_GETFL) return fail === "get" ? -1 : state.flags;
      if (command === F_SETFL) {
        if (fail === "set") return -1;
        state.sets++;
        state.flags = arg;
        return 0;
      }
      return -1;
    },
    errno: () => 9,
  };
  return { libc, state };
}

test("sets O_NONBLOCK, keeping the other flags, and says it was missing", () => {
  const fake = fakeFcntl(O_RDWR);
  expect(ensureNonBlocking(fake.libc, 5)).toEqual({ changed: true });
  expect(fake.state.flags).toBe(O_RDWR | O_NONBLOCK);
});

test("leaves a non-blocking descriptor alone (one fcntl)", () => {
  const fake = fakeFcntl(O_RDWR | O_NONBLOCK);
  expect(ensureNonBlocking(fake.libc, 5)).toEqual({ changed: false });
  expect(fake.state.sets).toBe(0);
});

test("a failed fcntl gives its errno", () => {
  expect(ensureNonBlocking(fakeFcntl(0, "get").libc, 5)).toEqual({ errno: 9 });
  expect(ensureNonBlocking(fakeFcntl(0, "set").libc, 5)).toEqual({ errno: 9 });
});
