import { linuxOpenTun } from "../linux/tun-device.ts";
import { workerUrl } from "../linux/worker-url.ts";
import { loadDenoLibc } from "./libc.ts";

/** Deno's TUN device: the Linux implementation with Deno.dlopen's libc and Deno's reader worker. */
export const openTun = linuxOpenTun(loadDenoLibc, () => workerUrl(import.meta.url, "./tun-worker.ts", "./tun-worker-deno.mjs"));
