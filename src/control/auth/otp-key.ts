import { join } from "node:path";
import { cachedKeySource, type SecretKeySource } from "../otp.ts";
import { loadOrCreateSecretKey } from "./secret-key-file.ts";

/** The key file that seals OTP secrets: DATA_DIR/otp.key (0600, created on first enrolment). */
export const OTP_KEY_FILE = "otp.key";

export function otpKeySource(dataDir: string): SecretKeySource {
  return cachedKeySource(() => loadOrCreateSecretKey(join(dataDir, OTP_KEY_FILE)));
}
