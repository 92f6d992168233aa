/**
 * The gateway process as /proc shows it: resident and proportional memory, CPU time. Read by the
 * runner (same PID namespace as the gateway, whatever the network namespace).
 */
import { readFileSync } from "node:fs";

export interface GatewaySample {
  at: number;
  rssKiB: number;
  /** Proportional set size (shared pages split between their users); undefined without smaps_rollup. */
  pssKiB?: number;
  /** utime + stime, in seconds. */
  cpuSeconds: number;
}

/** Linux's USER_HZ: /proc/PID/stat counts CPU time in 1/100 s on every architecture gw runs on. */
const TICKS_PER_SECOND = 100;

export function sampleGateway(pid: number): GatewaySample {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const rssKiB = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
  let pssKiB: number | undefined;
  try {
    pssKiB = Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1] ?? NaN);
  } catch {}
  // Fields after "(comm) ": state is field 3, utime 14, stime 15 (1-based), so 11 and 12 here.
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
  const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  return { at: Date.now(), rssKiB, pssKiB, cpuSeconds };
}

/** Share of one core the gateway used between two samples, in percent. */
export function cpuPercent(a: GatewaySample, b: GatewaySample): number {
  const wall = (b.at - a.at) / 1000;
  return wall > 0 ? (100 * (b.cpuSeconds - a.cpuSeconds)) / wall : 0;
}

export const mib = (kib: number | undefined): string => (kib === undefined || Number.isNaN(kib) ? "n/a" : `${(kib / 1024).toFixed(1)} MiB`);
