import { err } from "../../errors.ts";
import type { AdoptUdp } from "../udp.ts";

/**
 * Deno cannot wrap a handed UDP descriptor: Deno.listenDatagram takes no descriptor, and
 * node:dgram's bind({ fd }) throws ERR_INVALID_FD_TYPE ("Unsupported fd type: UNKNOWN", Deno 2.9.6).
 */
export const adoptUdp: AdoptUdp = async (fd) =>
  err("udp_adopt_unsupported", `cannot take over the handed UDP socket (fd ${fd}) under Deno: DTLS in worker processes needs Bun for now; run gw on Bun, or start it without DTLS (--no-dtls) or without --workers`);
