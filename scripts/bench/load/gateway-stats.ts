/**
 * The gateway process and its workers as /proc shows them: resident and proportional memory, CPU
 * time. Read by the runner (same PID namespace as the gateway, whatever the network namespace).
 */
import { readdirSync, readFileSync } from "node:fs";

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

/**
 * The gateway and its worker processes (gw serve --workers N), summed: memory and CPU of the whole
 * process tree under `pid`, as they are now (a worker that exited is no longer counted).
 */
export function sampleGateway(pid: number, proc = "/proc"): GatewaySample {
  let rssKiB = 0;
  let pssKiB: number | undefined = 0;
  let cpuSeconds = 0;
  for (const member of processTree(pid, proc)) {
    const one = sampleProcess(member, proc);
    if (!one) continue;
    rssKiB += one.rssKiB;
    pssKiB = pssKiB === undefined || one.pssKiB === undefined ? undefined : pssKiB + one.pssKiB;
    cpuSeconds += one.cpuSeconds;
  }
  return { at: Date.now(), rssKiB, pssKiB, cpuSeconds };
}

/** `pid` and every process below it, from each process's parent in /proc/N/stat. */
export function processTree(pid: number, proc = "/proc"): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync(proc)) {
    if (!/^\d+$/.test(name)) continue;
    const fields = statFields(Number(name), proc);
    if (!fields) continue;
    const parent = Number(fields[1]);
    const list = children.get(parent);
    if (list) list.push(Number(name));
    else children.set(parent, [Number(name)]);
  }
  const tree: number[] = [];
  const walk = [pid];
  while (walk.length > 0) {
    const next = walk.pop()!;
    tree.push(next);
    walk.push(...(children.get(next) ?? []));
  }
  return tree;
}

function sampleProcess(pid: number, proc: string): Omit<GatewaySample, "at"> | undefined {
  try {
    const status = readFileSync(`${proc}/${pid}/status`, "utf8");
    const rssKiB = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
    let pssKiB: number | undefined;
    try {
      pssKiB = Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`${proc}/${pid}/smaps_rollup`, "utf8"))?.[1] ?? NaN);
    } catch {}
    const fields = statFields(pid, proc);
    if (!fields) return undefined;
    // After "(comm) ": state is field 3, utime 14, stime 15 (1-based), so 11 and 12 here.
    return { rssKiB, pssKiB, cpuSeconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND };
  } catch {
    return undefined; // gone meanwhile
  }
}

/** The fields of /proc/N/stat after "(comm) " (state first, then the parent's pid). */
function statFields(pid: number, proc: string): string[] | undefined {
  try {
    const stat = readFileSync(`${proc}/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** Share of one core the gateway used between two samples, in percent. */
export function cpuPercent(a: GatewaySample, b: GatewaySample): number {
  const wall = (b.at - a.at) / 1000;
  return wall > 0 ? (100 * (b.cpuSeconds - a.cpuSeconds)) / wall : 0;
}

export const mib = (kib: number | undefined): string => (kib === undefined || Number.isNaN(kib) ? "n/a" : `${(kib / 1024).toFixed(1)} MiB`);
