import { readdirSync, readFileSync } from "node:fs";

/** One thread of a process as /proc shows it. */
export interface ThreadNice {
  tid: number;
  name: string;
  nice: number;
}

/** A process's threads (this one's with "self"), main thread first: id, name and nice value. A thread that ends while read is left out. */
export function threadNiceValues(pid: number | "self" = "self"): ThreadNice[] {
  const threads: ThreadNice[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`).sort((a, b) => Number(a) - Number(b))) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trimEnd();
      // The fields after the name in parentheses (which may hold spaces): nice is the 19th of stat, the 17th after it.
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      threads.push({ tid: Number(tid), name, nice: Number(stat.slice(stat.lastIndexOf(") ") + 2).split(" ")[16]) });
    } catch {
      // gone
    }
  }
  return threads;
}
