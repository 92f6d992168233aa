import { expect, test } from "bun:test";
import { UDP_RECEIVE_BUFFER_BYTES } from "../../../../src/runtime/linux/socket-options.ts";
import { openBunUdp } from "../../../../src/runtime/bun/udp-socket.ts";

test.skipIf(process.platform !== "linux")("the UDP socket's receive buffer is raised (past rmem_max as root, else to it)", async () => {
  const r = await openBunUdp("127.0.0.1", 0);
  if (!r.ok) throw r.error;
  try {
    // The kernel reports twice what was set (it counts its bookkeeping); the default is ~208 KiB reported as 212,992.
    if (process.getuid?.() === 0) expect(r.value.receiveBuffer).toBe(2 * UDP_RECEIVE_BUFFER_BYTES);
    else expect(r.value.receiveBuffer).toBeGreaterThanOrEqual(212_992);
  } finally {
    r.value.close();
  }
});
