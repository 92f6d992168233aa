import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSecret, sealSecret } from "../../../../src/control/auth/secret-box.ts";
import { loadOrCreateSecretKey } from "../../../../src/control/auth/secret-key-file.ts";

const dir = mkdtempSync(join(tmpdir(), "gw-key-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const code = (r: { ok: boolean; error?: { code: string } }) => (r.ok ? undefined : r.error?.code);

describe("loadOrCreateSecretKey", () => {
  test("creates a 0600 key once, then returns the same key", () => {
    const path = join(dir, "secret.key");
    const first = loadOrCreateSecretKey(path);
    expect(first.ok).toBe(true);
    if (!first.ok) return;
    expect(first.value.length).toBe(32);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, "utf8")).toMatch(/^[A-Za-z0-9+/]{43}=\n$/);
    const second = loadOrCreateSecretKey(path);
    expect(second).toEqual(first);
    // A value sealed with the first load opens with the second.
    if (second.ok) expect(openSecret(second.value, sealSecret(first.value, "otp")).ok).toBe(true);
    expect(readdirSync(dir)).toEqual(["secret.key"]); // no temporary file left behind
  });

  test("refuses a key readable by others, and a damaged key", () => {
    const loose = join(dir, "loose.key");
    writeFileSync(loose, `${Buffer.alloc(32, 1).toString("base64")}\n`, { mode: 0o644 });
    chmodSync(loose, 0o644);
    const r = loadOrCreateSecretKey(loose);
    expect(code(r)).toBe("secret_key_unsafe");
    if (!r.ok) expect(r.error.message).toContain(`chmod 600 ${loose}`);
    chmodSync(loose, 0o600);
    expect(loadOrCreateSecretKey(loose).ok).toBe(true);

    const short = join(dir, "short.key");
    writeFileSync(short, "AAAA\n", { mode: 0o600 });
    expect(code(loadOrCreateSecretKey(short))).toBe("secret_key_invalid");
    expect(readFileSync(short, "utf8")).toBe("AAAA\n"); // never overwritten
  });

  test("a missing directory is secret_key_unreadable", () => {
    expect(code(loadOrCreateSecretKey(join(dir, "no", "such", "secret.key")))).toBe("secret_key_unreadable");
  });
});
