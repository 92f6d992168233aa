/** `gw admin`: web UI accounts from the CLI, on the data directory (the same API routes the server has). */
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { gwCli, provision, tempDir } from "../harness/gateway.ts";

describe("gw admin", () => {
  const work = tempDir("admin");
  const dataDir = join(work, "data");
  provision("sources", dataDir, []);
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  const gw = (args: string[], input?: string) => gwCli("sources", [...args, "--data-dir", dataDir], input);

  test("add, list, role, passwd, remove; the last admin stays; bad input is a usage error", () => {
    expect(gw(["admin", "add", "olga", "--role", "admin", "--password-stdin"], "olga-pass-12345\n").code).toBe(0);
    const readOnly = gw(["admin", "add", "rita", "--role", "read", "--password-stdin"], "rita-pass-12345\n");
    expect(readOnly.code).toBe(0);
    const listed = JSON.parse(gw(["admin", "list", "--json"]).stdout) as { name: string; role: string }[];
    expect(listed.map((x) => [x.name, x.role]).sort()).toEqual([["olga", "admin"], ["rita", "read"]]);
    expect(gw(["admin", "add", "olga", "--role", "admin", "--password-stdin"], "x-pass-12345\n").stderr).toContain("admin_exists");
    expect(gw(["admin", "add", "zed", "--role", "root", "--password-stdin"], "x\n").code).toBe(2);
    expect(gw(["admin", "add", "zed", "--role", "read"]).code).toBe(2);
    // olga is the only one with role admin: she can lose neither role nor account.
    expect(gw(["admin", "role", "olga", "read"]).stderr).toContain("last_admin");
    expect(gw(["admin", "remove", "olga"]).stderr).toContain("last_admin");
    expect(gw(["admin", "role", "rita", "admin"]).code).toBe(0);
    expect(gw(["admin", "passwd", "rita", "--password-stdin"], "rita-new-pass-123\n").code).toBe(0);
    expect(gw(["admin", "remove", "olga"]).code).toBe(0);
    expect(gw(["admin", "remove", "olga"]).stderr).toContain("admin_not_found");
    const actions = (JSON.parse(gw(["audit", "--json"]).stdout) as { action: string; target: string }[]).map((e) => `${e.action} ${e.target}`);
    expect(actions).toContain("admin.create olga");
    expect(actions).toContain("admin.delete olga");
  }, 60_000); // about fifteen CLI runs

  test("otp enroll prints the secret once (the account then needs a code), reset removes it", () => {
    expect(gw(["admin", "add", "tess", "--role", "read", "--password-stdin"], "tess-pass-12345\n").code).toBe(0);
    const enrolled = JSON.parse(gw(["admin", "otp", "enroll", "tess", "--json"]).stdout) as { admin: string; secret: string; uri: string };
    expect(enrolled.admin).toBe("tess");
    expect(enrolled.secret).toMatch(/^[A-Z2-7]{16,}$/);
    expect(enrolled.uri).toStartWith("otpauth://totp/");
    expect((JSON.parse(gw(["admin", "list", "--json"]).stdout) as { name: string; otp: { enrolled: boolean } }[]).find((a) => a.name === "tess")?.otp.enrolled).toBe(true);
    expect(gw(["admin", "otp", "enroll", "tess"]).stderr).toContain("otp_already_enrolled");
    expect(gw(["admin", "otp", "reset", "tess"]).code).toBe(0);
    expect(gw(["admin", "otp", "reset", "tess"]).stderr).toContain("otp_not_enrolled");
  }, 30_000);
});
