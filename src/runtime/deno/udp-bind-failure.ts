import { err, type Result } from "../../errors.ts";

/**
 * A failed bind of one of Deno's UDP sockets (Deno.listenDatagram names its errors, node:dgram
 * gives errno codes) as OpenUdp's error: udp_port_in_use, udp_forbidden, else udp_failed. `where`
 * names the socket, e.g. "UDP 0.0.0.0:443".
 */
export function udpBindFailure(where: string, e: unknown): Result<never> {
  const name = (e as Error).name;
  const code = (e as NodeJS.ErrnoException).code;
  if (name === "AddrInUse" || code === "EADDRINUSE") return err("udp_port_in_use", `${where} is already in use: stop the other service, or start gw with --no-dtls`);
  if (name === "PermissionDenied" || code === "EACCES" || code === "EPERM") return err("udp_forbidden", `not allowed to bind ${where}: run as root or grant CAP_NET_BIND_SERVICE`);
  return err("udp_failed", `cannot bind ${where}: ${(e as Error).message}`);
}
