import { startDenoReaderWorker } from "./reader-worker.ts";

/** Deno's TUN reader worker: each read is one packet (after its virtio-net header, when the device has one). */
startDenoReaderWorker((libc, fd, ringAddress) => (offset, length) => Number(libc.raw.read(fd, ringAddress + offset, length)));
