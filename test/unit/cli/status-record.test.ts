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

  test("after a login refused for a busy hasher: the wait such logins are told now", async () => {
    const f = apiFixture({ busyRetrySeconds: 6.4 });
    f.control.authStats.successes = 1;
    f.control.authStats.failure("server_busy");
    const s = statusSchema.parse((await f.request("GET", "/api/v1/status")).body);
    expect(s.auth.busyRetrySeconds).toBe(6.4);
    expect(statusRecord(s).logins).toBe("1 ok, 1 failed (server_busy 1); busy logins are told to wait 6 s now (Retry-After)");
    const metrics = (await f.request("GET", "/metrics")).text;
    expect(metrics).toContain("gw_login_busy_retry_seconds 6.4");
  });

  test("the CLI working on the data directory alone has no wait to show", async () => {
    const f = apiFixture({ running: false });
    f.control.authStats.failure("server_busy");
    const s = statusSchema.parse((await f.request("GET", "/api/v1/status")).body);
    expect(s.auth.busyRetrySeconds).toBeNull();
    expect(statusRecord(s).logins).toBe("0 ok, 1 failed (server_busy 1)");
  });
});
