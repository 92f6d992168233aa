import type { DataPlane } from "../dataplane/data-plane.ts";
import { logLine, type LogLine } from "../log/log-line.ts";
import type { MemoryProbe } from "../runtime/memory-probe.ts";

const MIB = 1024 * 1024;
/** Object types named in the line: enough to see what a leak is made of. */
const TOP_TYPES = 12;

/**
 * SIGUSR2 on gw serve: a full garbage collection, then one log line with the memory left and what
 * holds it (sessions, tunnels, DTLS peers, the most numerous heap objects). Tells a leak (objects
 * that stay) from a heap that does not give its pages back (RSS above a small heap). A runtime
 * that cannot collect on demand gets the line all the same, saying that it did not. Last come the
 * DTLS socket's counters by path (UdpSocket.counters): how many datagrams gw's own wait read and
 * how many the runtime's loop delivered, how they left (UDP GSO runs, sendmmsg, one by one).
 */
export function memoryReport(probe: MemoryProbe, plane: DataPlane | undefined, worker?: number): LogLine {
  const collected = probe.collect();
  const f = probe.figures();
  const objects = f.objectTypes.slice(0, TOP_TYPES).map(([type, count]) => `${type} ${count}`).join(", ") || "not counted by this runtime";
  const rss = (f.rssBytes / MIB).toFixed(1);
  const heap = (f.heapBytes / MIB).toFixed(1);
  // Where the runtime could not collect, the heap figure still holds garbage: the line says so.
  const when = collected ? logLine`memory after a full collection` : logLine`memory without a collection (this runtime offers none on demand)`;
  // With --workers N the tunnels live in the workers: this is the main process's own memory.
  if (!plane) return (when + logLine` (main process; the tunnels are in the workers): rss=${rss} MiB heap=${heap} MiB objects: ${objects}`) as LogLine;
  const { tunnels, channels } = plane.size;
  const whose = worker !== undefined ? logLine` (worker ${worker})` : "";
  const counted = plane.udpCounters();
  // Each name and count escaped on its own: one value holding spaces would be quoted as one field.
  const udp = counted === undefined ? "" : ` udp:${Object.entries(counted).map(([name, n]) => logLine` ${name}=${n}`).join("")}`;
  return (when + whose + logLine`: rss=${rss} MiB heap=${heap} MiB sessions=${plane.sessions.size} tunnels=${tunnels} cstp=${channels} dtls_peers=${plane.dtls?.peerCount ?? 0} objects: ${objects}` + udp) as LogLine;
}
