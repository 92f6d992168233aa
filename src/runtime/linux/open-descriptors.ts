import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/**
 * This process's open descriptors with what each points to ("socket:[inode]",
 * "anon_inode:[eventpoll]", a path), from /proc/self/fd; empty where /proc is not mounted. A
 * descriptor closed while the list is read (the directory's own, another thread's) is left out.
 */
export function openDescriptors(): { fd: number; target: string }[] {
  let names: string[];
  try {
    names = readdirSync("/proc/self/fd");
  } catch {
    return [];
  }
  const open: { fd: number; target: string }[] = [];
  for (const name of names) {
    try {
      open.push({ fd: Number(name), target: readlinkSync(`/proc/self/fd/${name}`) });
    } catch {
      // closed meanwhile
    }
  }
  return open;
}

/**
 * The epoll descriptor that watches `fd`: the runtime's own event loop, for a socket the runtime
 * opened (its loop registers the socket when it is created): an eventpoll whose fdinfo lists `fd`
 * as a target ("tfd:"). -1 when none does (another platform, another kind of loop, no /proc).
 */
export function epollWatching(fd: number): number {
  const target = new RegExp(`^tfd:\\s+${fd}\\s`, "m");
  for (const open of openDescriptors()) {
    if (open.target !== "anon_inode:[eventpoll]") continue;
    try {
      if (target.test(readFileSync(`/proc/self/fdinfo/${open.fd}`, "utf8"))) return open.fd;
    } catch {
      // closed meanwhile: not the loop's
    }
  }
  return -1;
}
