import { SOCKADDR_BYTES } from "../linux/sockaddr.ts";
import { addressOf } from "./libc.ts";
import { startDenoReaderWorker } from "./reader-worker.ts";

/**
 * Deno's datagram reader worker for a handed UDP socket (udp-adopt.ts): the TUN reader's loop and
 * ring, each read a recvfrom that puts the source's sockaddr in the SOCKADDR_BYTES before the
 * datagram, as a TUN read puts its virtio-net header.
 */
startDenoReaderWorker((libc, fd, ringAddress) => {
  const addressLength = new Uint32Array(1);
  const addressLengthAt = addressOf(addressLength);
  return (offset, length) => {
    addressLength[0] = SOCKADDR_BYTES;
    const from = ringAddress + offset;
    const n = Number(libc.raw.recvfrom(fd, from + SOCKADDR_BYTES, length - SOCKADDR_BYTES, 0, from, addressLengthAt));
    return n < 0 ? n : n + SOCKADDR_BYTES;
  };
});
