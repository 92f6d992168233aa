/**
 * The secret-box key file in the data directory: 32 random bytes, base64 on one line, mode 0600.
 * Created on first use without ever overwriting an existing key (losing it makes every sealed
 * OTP secret unreadable).
 */
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
import { err, ok, type Result } from "../../errors.ts";
import { generateSecretBoxKey } from "./secret-box.ts";

const errno = (e: unknown) => (e as NodeJS.ErrnoException).code;

/**
 * Reads the key at `path`, creating it when absent. Error codes: `secret_key_unsafe` (readable
 * by group or others), `secret_key_invalid` (not 32 bytes of base64), `secret_key_unreadable`
 * (any I/O failure, with the system's reason).
 */
export function loadOrCreateSecretKey(path: string): Result<Uint8Array> {
  try {
    return readKey(path);
  } catch (e) {
    if (errno(e) !== "ENOENT") return unreadable(path, e);
  }
  // Write a temporary file, then link it into place: link() refuses to replace an existing file,
  // so two processes starting at once end up with the same key, and a crash leaves no half key.
  const temp = `${path}.${process.pid}.${Date.now()}.tmp`;
  try {
    const fd = openSync(temp, "wx", 0o600);
    try {
      writeSync(fd, `${Buffer.from(generateSecretBoxKey()).toString("base64")}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(temp, path);
    } catch (e) {
      if (errno(e) !== "EEXIST") throw e;
    }
    return readKey(path);
  } catch (e) {
    return unreadable(path, e);
  } finally {
    try {
      unlinkSync(temp);
    } catch {
      // already gone, or never created
    }
  }
}

/** Throws for I/O errors (ENOENT included); returns a Result for content and permission problems. */
function readKey(path: string): Result<Uint8Array> {
  const mode = statSync(path).mode & 0o777;
  if (mode & 0o077) {
    return err(
      "secret_key_unsafe",
      `The secret key file ${path} is readable by other users (mode ${mode.toString(8)}). ` +
        `Run \`chmod 600 ${path}\` and check who could have copied it.`,
    );
  }
  const text = readFileSync(path, "utf8").trim();
  const key = Buffer.from(text, "base64");
  if (!/^[A-Za-z0-9+/]+=*$/.test(text) || key.length !== 32) {
    return err(
      "secret_key_invalid",
      `The secret key file ${path} does not hold a 32-byte base64 key. Restore it from a backup; ` +
        "if it is lost, move it away and reset every user's OTP enrolment.",
    );
  }
  return ok(new Uint8Array(key));
}

function unreadable(path: string, e: unknown): Result<never> {
  return err(
    "secret_key_unreadable",
    `The secret key file ${path} cannot be read or created (${errno(e) ?? String(e)}). Check that the ` +
      "data directory exists and that the gateway's user owns it.",
  );
}
