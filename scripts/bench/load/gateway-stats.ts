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
  /** Every thread of the tree, for where its CPU went (threadShares); absent where /proc shows no tasks. */
  threads?: ThreadSample[];
}

/** One thread of the gateway's tree: its process, its id and name, its time on a CPU so far (schedstat). */
export interface ThreadSample {
  pid: number;
  tid: number;
  comm: string;
  cpuNs: number;
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
  const threads: ThreadSample[] = [];
  for (const member of processTree(pid, proc)) {
    const one = sampleProcess(member, proc);
    if (!one) continue;
    rssKiB += one.rssKiB;
    pssKiB = pssKiB === undefined || one.pssKiB === undefined ? undefined : pssKiB + one.pssKiB;
    cpuSeconds += one.cpuSeconds;
    threads.push(...sampleThreads(member, proc));
  }
  return { at: Date.now(), rssKiB, pssKiB, cpuSeconds, ...(threads.length > 0 && { threads }) };
}

/** ns thread `tid` of process `pid` has run on a CPU: the first field of /proc/PID/task/TID/schedstat. */
export function threadCpuNs(pid: number, tid: number, proc = "/proc"): number {
  return Number(readFileSync(`${proc}/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
}

/** The threads of process `pid` with their CPU time (threadCpuNs). */
function sampleThreads(pid: number, proc: string): ThreadSample[] {
  const threads: ThreadSample[] = [];
  let tids: string[];
  try {
    tids = readdirSync(`${proc}/${pid}/task`);
  } catch {
    return threads;
  }
  for (const tid of tids) {
    try {
      const cpuNs = threadCpuNs(pid, Number(tid), proc);
      const comm = readFileSync(`${proc}/${pid}/task/${tid}/comm`, "utf8").trim();
      if (Number.isFinite(cpuNs)) threads.push({ pid, tid: Number(tid), comm, cpuNs });
    } catch {} // gone meanwhile
  }
  return threads;
}

/** Where the tree's CPU went between two samples, in ms a second. */
export interface ThreadShares {
  /** Each process's main thread (its tid is its pid) and its name, the gateway's own first. */
  mains: { pid: number; comm: string; msPerSecond: number }[];
  /** Every other thread, summed by name, largest first. */
  others: { comm: string; msPerSecond: number }[];
}

/**
 * Splits the CPU between samples `a` and `b` of the tree under `root` by thread: idle CPU at scale
 * is the main threads' (the workers' event loops), and a figure that moves between runs says
 * where only when split. Threads present in `b` alone count from zero; those gone are not counted.
 */
export function threadShares(root: number, a: GatewaySample, b: GatewaySample): ThreadShares | undefined {
  const seconds = (b.at - a.at) / 1000;
  if (!a.threads || !b.threads || seconds <= 0) return undefined;
  const before = new Map(a.threads.map((t) => [`${t.pid}/${t.tid}`, t.cpuNs]));
  const mains: ThreadShares["mains"] = [];
  const others = new Map<string, number>();
  for (const t of b.threads) {
    const ms = (t.cpuNs - (before.get(`${t.pid}/${t.tid}`) ?? 0)) / 1e6 / seconds;
    if (t.tid === t.pid) mains.push({ pid: t.pid, comm: t.comm, msPerSecond: ms });
    else others.set(t.comm, (others.get(t.comm) ?? 0) + ms);
  }
  mains.sort((x, y) => (x.pid === root ? -1 : y.pid === root ? 1 : x.pid - y.pid));
  return { mains, others: [...others].map(([comm, msPerSecond]) => ({ comm, msPerSecond })).sort((x, y) => y.msPerSecond - x.msPerSecond || x.comm.localeCompare(y.comm)) };
}

/** Above this many processes under the gateway's own, they are summed by name (ocserv runs one a session). */
const PROCESSES_LISTED = 8;

/**
 * One line of threadShares, the gateway's main thread named as the kernel names it:
 * "gw 5.1, workers 48.3 + 46.5 ms/s; other threads 2.9 (mi-scavenger 1.5, ...)", or with many
 * processes "ocserv-main 1.2, processes ocserv-worker x2000 95.0, ocserv-sm x1 0.4 ms/s; ...".
 */
export function formatThreadShares(root: number, shares: ThreadShares): string {
  const ms = (n: number) => n.toFixed(1);
  const own = shares.mains.find((m) => m.pid === root);
  const workers = shares.mains.filter((m) => m.pid !== root);
  const otherTotal = shares.others.reduce((n, o) => n + o.msPerSecond, 0);
  const named = shares.others.slice(0, 3).map((o) => `${o.comm} ${ms(o.msPerSecond)}`).join(", ");
  let below = "";
  if (workers.length > PROCESSES_LISTED) {
    const byName = new Map<string, { count: number; msPerSecond: number }>();
    for (const w of workers) {
      const group = byName.get(w.comm) ?? { count: 0, msPerSecond: 0 };
      group.count++;
      group.msPerSecond += w.msPerSecond;
      byName.set(w.comm, group);
    }
    const groups = [...byName].sort(([a, x], [b, y]) => y.msPerSecond - x.msPerSecond || a.localeCompare(b));
    below = `, processes ${groups.map(([comm, g]) => `${comm} x${g.count} ${ms(g.msPerSecond)}`).join(", ")}`;
  } else if (workers.length > 0) below = `, workers ${workers.map((w) => ms(w.msPerSecond)).join(" + ")}`;
  return `main threads: ${own ? `${own.comm} ${ms(own.msPerSecond)}` : "gateway n/a"}${below} ms/s; other threads ${ms(otherTotal)} ms/s${named ? ` (${named})` : ""}`;
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
    const rss = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    // An exiting process (a zombie: ocserv's workers at logout) has no memory left to count.
    const rssKiB = Number(rss ?? 0);
    let pssKiB: number | undefined = rss === undefined ? 0 : undefined;
    try {
      if (rss !== undefined) pssKiB = Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`${proc}/${pid}/smaps_rollup`, "utf8"))?.[1] ?? NaN);
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
