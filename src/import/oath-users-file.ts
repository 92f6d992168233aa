/**
 * One line of a liboath users file (ocserv's `otp=` file):
 *   TYPE USER PIN HEXKEY [COUNTER [LASTTIME]]
 * TYPE is HOTP (counter based) or HOTP/T30 or HOTP/T60 (time based, TOTP), optionally /6 or /8 digits:
 * "HOTP/T30", "HOTP/T30/6", "HOTP/E/8" ...
 */
export interface OathUser {
  user: string;
  type: string;
  keyHex: string;
  /** What gw can take: TOTP with 30 s steps and 6 digits (its only OTP model). */
  importable: boolean;
  /** Why not, when not. */
  reason?: string;
}

export function parseOathUsers(text: string): { users: OathUser[]; problems: string[] } {
  const users: OathUser[] = [];
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const [type, user, pin, keyHex] = line.split(/\s+/);
    if (!type || !user || pin === undefined || !keyHex || !/^([0-9a-fA-F]{2})+$/.test(keyHex)) {
      problems.push(`line ${index + 1}: not TYPE USER PIN HEXKEY`);
      return;
    }
    const [kind, step, digits] = type.toUpperCase().split("/");
    let reason: string | undefined;
    if (kind !== "HOTP") reason = `type ${type} is unknown`;
    else if (step !== "T30") reason = step === undefined || step === "E" ? "counter-based HOTP (gw's one-time codes are TOTP)" : `time step ${step.slice(1)} s (gw uses 30 s)`;
    else if (digits !== undefined && digits !== "6") reason = `${digits} digits (gw uses 6)`;
    else if (pin !== "-" && pin !== "") reason = "a PIN prefix (gw asks for the password separately)";
    users.push({ user, type, keyHex: keyHex.toLowerCase(), importable: reason === undefined, ...(reason ? { reason } : {}) });
  });
  return { users, problems };
}
