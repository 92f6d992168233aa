import { POLLIN } from "./tun-libc.ts";

/**
 * The reader's `struct pollfd[2] { int fd; short events; short revents; }` on [tun fd, wake fd],
 * both waiting for POLLIN: one layout for every runtime's binding of poll().
 */
export function tunPollFds(fd: number, wakeFd: number): { pollfds: Int32Array; tunRevents: () => number } {
  const pollfds = new Int32Array(4);
  const shorts = new Int16Array(pollfds.buffer);
  pollfds[0] = fd;
  shorts[2] = POLLIN;
  pollfds[2] = wakeFd;
  shorts[6] = POLLIN;
  return { pollfds, tunRevents: () => shorts[3]! };
}
