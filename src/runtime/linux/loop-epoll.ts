import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/**
 * The epoll descriptor that watches `fd`: the runtime's own event loop, for a socket the runtime
 * opened (its loop registers the socket when it is created). Found in /proc/self: an
 * `anon_inode:[eventpoll]` descriptor whose fdinfo lists `fd` as a target ("tfd:"). -1 when none
 * does (another platform, another kind of loop, or /proc not mounted).
 */
export function epollWatching(fd: number): number {
  let names: string[];
  try {
    names = readdirSync("/proc/self/fd");
  } catch {
    return -1;
  }
  const target = new RegExp(`^tfd:\\s+${fd}\\s`, "m");
  for (const name of names) {
    try {
      if (readlinkSync(`/proc/self/fd/${name}`) !== "anon_inode:[eventpoll]") continue;
      if (target.test(readFileSync(`/proc/self/fdinfo/${name}`, "utf8"))) return Number(name);
    } catch {
      // closed meanwhile (readdir's own descriptor, another thread's): not the loop's
    }
  }
  return -1;
}
