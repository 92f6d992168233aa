/**
 * struct sock_fprog { unsigned short len; struct sock_filter *filter; } on a 64-bit target
 * (x86-64, aarch64): len at 0, 6 bytes of padding, the pointer at 8; 16 bytes in all.
 */
import { SOCK_FILTER_BYTES } from "./reuseport-steering.ts";

export const SOCK_FPROG_BYTES = 16;

/** The sock_fprog for `program` (struct sock_filter bytes) at address `programAddress`. */
export function sockFprog(program: Uint8Array, programAddress: bigint): Uint8Array {
  const fprog = new Uint8Array(SOCK_FPROG_BYTES);
  const view = new DataView(fprog.buffer);
  view.setUint16(0, program.byteLength / SOCK_FILTER_BYTES, true);
  view.setBigUint64(8, programAddress, true);
  return fprog;
}
