import type { OpenWorkerKernel } from "../worker-kernel.ts";
import { linuxWorkerKernelParts, openWorkerKernelWith } from "../linux/worker-kernel.ts";
import { loadBunBpfLibc } from "./bpf-libc.ts";
import { loadBunReuseportLibc } from "./reuseport-libc.ts";
import { loadBunLibc } from "./tun-libc.ts";

/** The workers' kernel objects under Bun: the Linux implementation with bun:ffi's libc (bound at the call, not at import). */
export const openWorkerKernel: OpenWorkerKernel = async (options) =>
  openWorkerKernelWith(linuxWorkerKernelParts({ reuseport: loadBunReuseportLibc(), tun: loadBunLibc(), bpf: loadBunBpfLibc() }), options);
