import { linuxOpenTun } from "../linux/tun-device.ts";
import { workerUrl } from "../linux/worker-url.ts";
import { loadBunLibc } from "./tun-libc.ts";

/** Bun's TUN device: the Linux implementation with bun:ffi's libc and Bun's reader worker. */
export const openTun = linuxOpenTun(loadBunLibc, () => workerUrl(import.meta.url, "./tun-worker.ts", "./tun-worker-bun.mjs"));
