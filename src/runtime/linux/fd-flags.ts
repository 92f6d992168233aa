import { F_GETFL, F_SETFL, O_NONBLOCK, type TunLibc } from "./tun-libc.ts";

/** The part of a libc binding that reads and sets a descriptor's file status flags. */
export type FcntlLibc = Pick<TunLibc, "fcntl" | "errno">;

/**
 * Sets O_NONBLOCK on `fd` unless it is set: `changed` says whether it was missing; a failed
 * fcntl gives its errno. The flag belongs to the open file (socket or TUN queue), so it is
 * shared by every process holding a copy of the descriptor.
 */
export function ensureNonBlocking(libc: FcntlLibc, fd: number): { changed: boolean } | { errno: number } {
  const flags = libc.fcntl(fd, F_GETFL, 0);
  if (flags < 0) return { errno: libc.errno() };
  if (flags & O_NONBLOCK) return { changed: false };
  if (libc.fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return { errno: libc.errno() };
  return { changed: true };
}
