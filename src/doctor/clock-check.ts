import type { Finding } from "./check.ts";

/** One-time codes are accepted one 30 s step either side: the clock must be closer than that. */
export interface ClockEvidence {
  now: number;
  /** When the store was last written; a clock behind it has gone backwards. */
  storeWrittenAt?: number;
  /** What the host says about time synchronisation (timedatectl's NTPSynchronized), if it says. */
  synchronized?: boolean;
}

export function checkClock(e: ClockEvidence): Finding {
  const check = "clock";
  const at = new Date(e.now).toISOString();
  if (e.storeWrittenAt !== undefined && e.now + 60_000 < e.storeWrittenAt) {
    return {
      check,
      status: "fail",
      detail: `the clock (${at}) is behind the store's last write (${new Date(e.storeWrittenAt).toISOString()}): it went backwards`,
      fix: "set the time and keep it synchronised (systemctl enable --now systemd-timesyncd, or chrony): one-time codes and certificates depend on it",
    };
  }
  if (e.synchronized === false) {
    return {
      check,
      status: "warn",
      detail: `${at}, not synchronised: one-time codes fail once the clock is 30 s off`,
      fix: "systemctl enable --now systemd-timesyncd (or chrony), then timedatectl shows NTPSynchronized=yes",
    };
  }
  if (e.synchronized === undefined) {
    return { check, status: "ok", detail: `${at} (synchronisation unknown: no timedatectl; one-time codes need the clock within 30 s)` };
  }
  return { check, status: "ok", detail: `${at}, synchronised` };
}
