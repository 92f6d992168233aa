import { linuxAdoptTun, linuxOpenTun } from "../linux/tun-device.ts";
import { workerUrl } from "../linux/worker-url.ts";
import { loadBunLibc } from "./tun-libc.ts";

const readerUrl = () => workerUrl(import.meta.url, "./tun-worker.ts", "./tun-worker-bun.mjs");

/** Bun's TUN device: the Linux implementation with bun:ffi's libc and Bun's reader worker. */
export const openTun = linuxOpenTun(loadBunLibc, readerUrl);

/** A worker process's queue of the shared device, over its handed fd. */
export const adoptTun = linuxAdoptTun(loadBunLibc, readerUrl);
