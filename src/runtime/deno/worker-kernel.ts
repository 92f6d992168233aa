import type { OpenWorkerKernel } from "../worker-kernel.ts";
import { linuxWorkerKernelParts, openWorkerKernelWith } from "../linux/worker-kernel.ts";
import { loadDenoBpfLibc } from "./bpf-libc.ts";
import { loadDenoLibc } from "./libc.ts";
import { loadDenoReuseportLibc } from "./reuseport-libc.ts";

/** The workers' kernel objects under Deno: the Linux implementation with Deno.dlopen's libc (bound at the call, not at import). */
export const openWorkerKernel: OpenWorkerKernel = async (options) =>
  openWorkerKernelWith(linuxWorkerKernelParts({ reuseport: loadDenoReuseportLibc(), tun: loadDenoLibc(), bpf: loadDenoBpfLibc() }), options);
