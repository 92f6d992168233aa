/**
 * What a run found, as text for the operator, and the verdict: every reason the run failed (an
 * empty list means success). Pure, so the failure path is tested without a gateway.
 */
import { cpuPercent, formatThreadShares, mib, threadShares, type GatewaySample } from "./gateway-stats.ts";
import type { CounterSnapshot } from "./load-counters.ts";
import type { RunOptions } from "./run-options.ts";

export interface GatewaySamples {
  /** The gateway's pid (its main thread's figure is told from its workers'). */
  root?: number;
  idle: GatewaySample;
  rampEnd: GatewaySample;
  holdStart: GatewaySample;
  holdEnd: GatewaySample;
  afterLogout: GatewaySample;
  /** After logout and the gateway's full garbage collection (SIGUSR2), when it could be asked for one. */
  afterGc?: GatewaySample;
  /** Churn: the first sample past a fifth of the churn (heap grown to its working size). */
  warm?: GatewaySample;
  /** After a full collection at idle, and at N (hold runs): the memory the sessions hold, without garbage. */
  idleGc?: GatewaySample;
  holdGc?: GatewaySample;
  /** Churn: after a full collection at the warm-up and near the end, the churn still running (growth, not garbage). */
  churnWarmGc?: GatewaySample;
  churnEndGc?: GatewaySample;
}

export interface RunResult {
  options: RunOptions;
  rampSeconds: number;
  /** Sessions up (tunnel) and with DTLS, at the end of the hold (or of the churn). */
  held: number;
  dtlsHeld: number;
  counters: CounterSnapshot;
  gateway?: GatewaySamples;
  /** Problems of the load processes themselves (crashed, said nothing). */
  processProblems: string[];
}

export function failureReasons(r: RunResult): string[] {
  const reasons = [...r.processProblems];
  const failed = Object.entries(r.counters.failures);
  if (failed.length > 0) {
    const total = failed.reduce((n, [, v]) => n + v, 0);
    const kinds = failed.map(([k, v]) => `${k} ${v} (e.g. ${r.counters.examples[k]?.[0] ?? "?"})`).join("; ");
    reasons.push(`${total} failure${total === 1 ? "" : "s"}: ${kinds}`);
  }
  const notTried = r.counters.counts["sessions not tried (too many failures)"] ?? 0;
  if (notTried > 0) reasons.push(`${notTried} sessions not tried: the load processes stopped after too many failures`);
  if (r.options.churnSeconds === 0) {
    if (r.held < r.options.sessions) reasons.push(`only ${r.held} of ${r.options.sessions} sessions held`);
    if (r.options.dtls !== "none" && r.dtlsHeld < r.held) reasons.push(`DTLS established on only ${r.dtlsHeld} of ${r.held} held sessions`);
  } else if ((r.counters.counts["churn cycles"] ?? 0) === 0) reasons.push("no churn cycle completed");
  return reasons;
}

export function formatReport(r: RunResult): string[] {
  const o = r.options;
  const c = r.counters.counts;
  const lines: string[] = [];
  const logins = c.logins ?? 0;
  lines.push(`load: ${o.sessions} sessions${o.churnSeconds ? " churning" : ""} from ${o.processes} processes and ${o.sources.length} source addresses, DTLS ${o.dtls}`);
  if (o.churnSeconds === 0) {
    lines.push(`  ramp          ${logins} logins in ${r.rampSeconds.toFixed(1)} s: ${(logins / Math.max(r.rampSeconds, 0.001)).toFixed(1)} logins/s (${o.concurrency} at a time)`);
    lines.push(`  held          CSTP ${r.held}, DTLS ${r.dtlsHeld} (at the end of a ${o.holdSeconds} s hold)`);
  } else {
    const cycles = c["churn cycles"] ?? 0;
    lines.push(`  churn         ${cycles} cycles in ${o.churnSeconds} s (${(cycles / o.churnSeconds).toFixed(1)}/s), ${logins} logins, DTLS ${c["dtls established"] ?? 0}`);
  }
  const deferred = c["logins deferred (Retry-After)"] ?? 0;
  if (deferred > 0) lines.push(`  deferred      ${deferred} logins refused with a Retry-After (the gateway's load shedding), tried again after it`);
  const rtt = c["pings answered"] ? ` mean RTT ${((c["ping rtt total ms"] ?? 0) / c["pings answered"]).toFixed(1)} ms` : "";
  lines.push(`  echoes        ${c["pings sent"] ?? 0} sent, ${c["pings answered"] ?? 0} answered${rtt}; DPD sent ${c["dpd sent"] ?? 0}; keepalives sent ${c["keepalives sent"] ?? 0}; DTLS retransmissions ${c["dtls retransmissions"] ?? 0}`);
  const g = r.gateway;
  if (g) {
    const pss = (s: GatewaySample) => (s.pssKiB === undefined ? "" : `, PSS ${mib(s.pssKiB)}`);
    lines.push(`  gateway idle  RSS ${mib(g.idle.rssKiB)}${pss(g.idle)}`);
    if (o.churnSeconds === 0) {
      const n = Math.max(r.held, 1);
      const perRss = (g.holdEnd.rssKiB - g.idle.rssKiB) / n;
      const perPss = g.holdEnd.pssKiB !== undefined && g.idle.pssKiB !== undefined ? (g.holdEnd.pssKiB - g.idle.pssKiB) / n : undefined;
      lines.push(`  gateway at ${r.held}  RSS ${mib(g.holdEnd.rssKiB)}${pss(g.holdEnd)}`);
      lines.push(`  per session   RSS ${perRss.toFixed(1)} KiB${perPss === undefined ? "" : `, PSS ${perPss.toFixed(1)} KiB`}  ((at N - idle) / N)`);
      if (g.idleGc && g.holdGc) {
        const held = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : (b - a) / n);
        const gcPss = held(g.idleGc.pssKiB, g.holdGc.pssKiB);
        lines.push(
          `  after GC at N RSS ${mib(g.holdGc.rssKiB)}${pss(g.holdGc)}; per session RSS ${held(g.idleGc.rssKiB, g.holdGc.rssKiB)!.toFixed(1)} KiB${gcPss === undefined ? "" : `, PSS ${gcPss.toFixed(1)} KiB`}  (both after a full collection)`,
        );
      }
      const rampCpu = g.rampEnd.cpuSeconds - g.idle.cpuSeconds;
      lines.push(`  gateway CPU   ramp ${rampCpu.toFixed(1)} s (${((1000 * rampCpu) / Math.max(logins, 1)).toFixed(1)} ms per login); holding ${cpuPercent(g.holdStart, g.holdEnd).toFixed(2)} % of a core`);
      const root = g.root;
      const shares = root === undefined ? undefined : threadShares(root, g.holdStart, g.holdEnd);
      if (root !== undefined && shares) lines.push(`  while holding ${formatThreadShares(root, shares)}`);
    } else {
      const change = (from: GatewaySample) => {
        const pct = (100 * (g.afterLogout.rssKiB - from.rssKiB)) / from.rssKiB;
        return `${pct >= 0 ? "+" : ""}${pct.toFixed(1)} %`;
      };
      const cycles = c["churn cycles"] ?? 0;
      const cpu = g.holdEnd.cpuSeconds - g.idle.cpuSeconds;
      lines.push(`  gateway CPU   ${cpuPercent(g.idle, g.holdEnd).toFixed(1)} % of a core during the churn (${((1000 * cpu) / Math.max(cycles, 1)).toFixed(1)} ms per cycle)`);
      lines.push(`  churn memory  RSS before ${mib(g.idle.rssKiB)}, at the end ${mib(g.holdEnd.rssKiB)}, settled ${mib(g.afterLogout.rssKiB)} (${change(g.idle)} on before)`);
      if (g.warm) lines.push(`  warmed up     RSS ${mib(g.warm.rssKiB)} at t=${((g.warm.at - g.idle.at) / 1000).toFixed(0)} s; settled is ${change(g.warm)} on it`);
      if (g.churnWarmGc && g.churnEndGc) {
        const at = (x: GatewaySample) => `t=${((x.at - g.idle.at) / 1000).toFixed(0)} s`;
        const growth = (100 * (g.churnEndGc.rssKiB - g.churnWarmGc.rssKiB)) / g.churnWarmGc.rssKiB;
        lines.push(
          `  churn growth  RSS after a full collection, churning: ${mib(g.churnWarmGc.rssKiB)} at ${at(g.churnWarmGc)}, ${mib(g.churnEndGc.rssKiB)} at ${at(g.churnEndGc)} (${growth >= 0 ? "+" : ""}${growth.toFixed(1)} %)`,
        );
      }
    }
    lines.push(`  after logout  RSS ${mib(g.afterLogout.rssKiB)}${pss(g.afterLogout)} (${o.settleSeconds} s after the last session left)`);
    if (g.afterGc) lines.push(`  after GC      RSS ${mib(g.afterGc.rssKiB)}${pss(g.afterGc)} (the gateway's full collection, SIGUSR2; its log line names what is left)`);
  }
  const failed = Object.entries(r.counters.failures);
  lines.push(`  failures      ${failed.length === 0 ? "none" : failed.map(([k, v]) => `${k} ${v}`).join(", ")}`);
  for (const [k, list] of Object.entries(r.counters.examples)) for (const m of list) lines.push(`    ${k}: ${m}`);
  return lines;
}
