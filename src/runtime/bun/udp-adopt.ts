import { err, ok, type Result } from "../../errors.ts";
import type { AdoptUdp } from "../udp.ts";
import { ensureNonBlocking } from "../linux/fd-flags.ts";
import { bunUdpSocket, type BunUdpSocket } from "./udp-socket.ts";
import { linuxLibc } from "./udp-linux.ts";

/**
 * A worker process's UDP socket: its member of the main process's steered UDP group, handed over
 * as a descriptor, behind the same Bun.udpSocket as a socket gw binds itself (udp-socket.ts): one
 * callback per datagram, sends that have left when they return, UDP GSO for runs. Linux only
 * (gw's workers are).
 */
export const adoptUdp: AdoptUdp = async (fd) => adoptBunUdp(fd);

export async function adoptBunUdp(fd: number): Promise<Result<BunUdpSocket>> {
  if (!Number.isInteger(fd) || fd < 0) return err("udp_failed", `cannot adopt UDP fd ${fd}: not a descriptor (the main process hands it at 3, 4, ...)`);
  const libc = linuxLibc();
  if (libc === null) return err("udp_adopt_unsupported", "a handed UDP socket needs libc through bun:ffi (Linux): run gw with one process (no --workers)");
  // A spawn under Deno clears O_NONBLOCK on the open socket; the event loop's reads must not block.
  const nonBlocking = ensureNonBlocking(libc, fd);
  if ("errno" in nonBlocking) return err("udp_failed", `cannot make UDP fd ${fd} non-blocking (errno ${nonBlocking.errno}): is it the socket the main process handed?`);
  let socket: BunUdpSocket;
  try {
    socket = await bunUdpSocket({ fd });
  } catch (e) {
    return err("udp_failed", `cannot take over UDP fd ${fd}: ${(e as Error).message} (is it an open UDP socket, handed by the main process?)`);
  }
  return ok(socket);
}
