import { describe, expect, test } from "bun:test";
import { statusRecord } from "../../../src/cli/status-command.ts";
import { statusSchema } from "../../../src/control/status.ts";
import { apiFixture } from "../api/fixture.ts";

describe("gw status: logins", () => {
  test("no password checked yet: outcomes only", async () => {
    const f = apiFixture();
    const s = statusSchema.parse((await f.request("GET", "/api/v1/status")).body);
    expect(statusRecord(s).logins).toBe("0 ok, 0 failed");
  });

  test("the mean password check once there are checks, with their count", async () => {
    const f = apiFixture();
    f.control.authStats.successes = 2;
    f.control.authStats.failure("bad_password");
    for (const ms of [40, 50, 63]) f.control.authStats.passwordChecked(ms);
    const s = statusSchema.parse((await f.request("GET", "/api/v1/status")).body);
    expect(statusRecord(s).logins).toBe("2 ok, 1 failed (bad_password 1); password check 51.0 ms on average (3)");
  });
});
