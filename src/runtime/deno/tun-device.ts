import { linuxAdoptTun, linuxOpenTun } from "../linux/tun-device.ts";
import { workerUrl } from "../linux/worker-url.ts";
import { loadDenoLibc } from "./libc.ts";

const readerUrl = () => workerUrl(import.meta.url, "./tun-worker.ts", "./tun-worker-deno.mjs");

/** Deno's TUN device: the Linux implementation with Deno.dlopen's libc and Deno's reader worker. */
export const openTun = linuxOpenTun(loadDenoLibc, readerUrl);

/** A worker process's queue of the shared device, over its handed fd. */
export const adoptTun = linuxAdoptTun(loadDenoLibc, readerUrl);
