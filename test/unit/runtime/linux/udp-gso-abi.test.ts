import { expect, test } from "bun:test";
import { classifyGsoFailure } from "../../../../src/runtime/linux/udp-gso-abi.ts";

test("a refused GSO send: full buffer drops, unsupported stops GSO, anything else goes the plain way", () => {
  expect([11, 105].map(classifyGsoFailure)).toEqual(["drop", "drop"]); // EAGAIN, ENOBUFS
  expect([22, 5, 92].map(classifyGsoFailure)).toEqual(["unsupported", "unsupported", "unsupported"]); // EINVAL, EIO, ENOPROTOOPT
  expect([90, 111, 4].map(classifyGsoFailure)).toEqual(["plain", "plain", "plain"]); // EMSGSIZE, ECONNREFUSED, EINTR
});
