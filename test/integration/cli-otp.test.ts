/**
 * `gw user otp` and `gw group --auth` through the real CLI (sources and dist/gw) on a data
 * directory with no server: enrolment output (URI, secret, QR; JSON; PNG/SVG files 0600 that
 * decode back to the URI), the key file, reset, the errors and exit codes, the audit log.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gwCli, repoRoot, type GwVariant } from "../harness/gateway.ts";

const variants: GwVariant[] = ["sources", "binary"];
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

for (const variant of variants) {
  describe.skipIf(variant === "binary" && !existsSync(join(repoRoot, "dist/gw")))(`gw user otp (${variant})`, () => {
    const dir = mkdtempSync(join(tmpdir(), `gw-otp-${variant}-`));
    dirs.push(dir);
    const gw = (args: string[], input?: string) => gwCli(variant, [...args, "--data-dir", dir], input);
    // Only gw init (or gw serve) creates a data directory: the CLI refuses a missing one.
    beforeAll(() => expect(gw(["init"])).toMatchObject({ code: 0 }));

    test("a group requiring password+otp; enrol prints URI, secret and QR once and writes private images", () => {
      expect(gw(["group", "add", "secure", "--auth", "password+otp"]).code).toBe(0);
      expect(JSON.parse(gw(["group", "show", "secure", "--json"]).stdout).policy.auth).toBe("password+otp");
      const bad = gw(["group", "set", "secure", "--auth", "otp+password"]);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain("must start with password, certificate or saml");
      expect(gw(["user", "add", "alice", "--group", "secure", "--password-stdin"], "pw\n").code).toBe(0);

      const png = join(dir, "alice.png");
      const svg = join(dir, "alice.svg");
      const out = gw(["user", "otp", "enroll", "alice", "--png", png, "--svg", svg]);
      expect(out.code).toBe(0);
      const [uri, secretLine, ...qr] = out.stdout.split("\n");
      expect(uri).toMatch(/^otpauth:\/\/totp\/gw:alice\?secret=([A-Z2-7]{32})&issuer=gw&algorithm=SHA1&digits=6&period=30$/);
      const secret = new URL(uri!).searchParams.get("secret");
      expect(secretLine).toBe(`secret: ${secret}`);
      expect(qr.join("\n")).toMatch(/[█▀▄]/);
      expect(qr.join("\n")).not.toContain("\x1b["); // not a terminal: no colour codes
      for (const file of [png, svg]) expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(readFileSync(svg, "utf8")).toStartWith("<svg ");
      if (Bun.which("zbarimg")) expect(execFileSync("zbarimg", ["-q", "--raw", png], { encoding: "utf8" }).trim()).toBe(uri!);
      expect(statSync(join(dir, "otp.key")).mode & 0o777).toBe(0o600);
      expect(readFileSync(join(dir, "gw.db")).includes(Buffer.from(secret!))).toBe(false);

      const shown = JSON.parse(gw(["user", "show", "alice", "--json"]).stdout);
      expect(shown.otp.enrolled).toBe(true);
      expect(JSON.stringify(shown)).not.toContain(secret!);
      expect(gw(["user", "list"]).stdout).toMatch(/^alice +secure +enabled +set +- +enrolled /m);

      const twice = gw(["user", "otp", "enroll", "alice"]);
      expect(twice.code).toBe(1);
      expect(twice.stderr.trim()).toBe("gw: otp_already_enrolled: user alice is already enrolled for one-time codes: 'gw user otp reset alice' first, then enrol again");
    }, 60_000);

    test("reset, enrol again as JSON (a new secret), errors, and the audit log", () => {
      expect(gw(["user", "otp", "reset", "alice"]).code).toBe(0);
      const again = gw(["user", "otp", "reset", "alice"]);
      expect(again.code).toBe(1);
      expect(again.stderr.trim()).toBe("gw: otp_not_enrolled: user alice is not enrolled for one-time codes");
      const json = JSON.parse(gw(["user", "otp", "enroll", "alice", "--json"]).stdout);
      expect(Object.keys(json).sort()).toEqual(["enrolledAt", "secret", "uri", "user"]);
      expect(json.uri).toContain(`secret=${json.secret}`);
      const nobody = gw(["user", "otp", "enroll", "nobody"]);
      expect(nobody.code).toBe(1);
      expect(nobody.stderr).toContain("user_not_found");
      expect(gw(["user", "otp", "enroll"]).code).toBe(2);
      expect(gw(["user", "otp", "enroll", "alice", "--colour"]).code).toBe(2);
      const audit = JSON.parse(gw(["audit", "--json", "--oldest-first"]).stdout) as { action: string; actor: string; target: string }[];
      const otp = audit.filter((a) => a.action.startsWith("user.otp."));
      expect(otp.map((a) => a.action)).toEqual(["user.otp.enroll", "user.otp.reset", "user.otp.enroll"]);
      expect(otp.every((a) => a.actor === "local-cli" && a.target === "alice")).toBe(true);
      expect(JSON.stringify(audit)).not.toContain(json.secret);
    }, 60_000);
  });
}
