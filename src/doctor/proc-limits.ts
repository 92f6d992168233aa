import { readFileSync } from "node:fs";
import type { OpenFileLimit } from "../runtime/open-files.ts";

/** The open-file limit of a process, from /proc/PID/limits (Linux); undefined when unreadable. */
export function openFileLimitOf(pid: number | "self"): OpenFileLimit | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/limits`, "utf8");
  } catch {
    return undefined;
  }
  const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(text);
  if (!m) return undefined;
  const value = (v: string) => (v === "unlimited" ? Number.MAX_SAFE_INTEGER : Number(v));
  return { soft: value(m[1]!), hard: value(m[2]!) };
}
