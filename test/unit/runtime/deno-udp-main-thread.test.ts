import { describe, expect, test } from "bun:test";
import { unwrap } from "../../../src/errors.ts";

const onDeno = "Deno" in globalThis;

/** Deno's UDP socket read on the main thread (src/runtime/deno/udp-main-thread.ts); the datagram tests themselves run in adapters.test.ts. */
describe("Deno: the UDP socket read on the main thread", () => {
  test.skipIf(!onDeno)("a socket whose descriptor cannot be found is udp_descriptor_unknown, and its port is free again", async () => {
    const { loadDenoLibc } = await import("../../../src/runtime/deno/libc.ts");
    const { openUdpOnMainThread } = await import("../../../src/runtime/deno/udp-main-thread.ts");
    const libc = loadDenoLibc();
    // No descriptor answers getsockname: as if the runtime kept its socket where gw cannot see it.
    const blind = { ...libc, raw: { ...libc.raw, getsockname: () => -1 } } as typeof libc;
    const refused = await openUdpOnMainThread(blind, "127.0.0.1", 0);
    expect(refused.ok ? "opened" : refused.error.code).toBe("udp_descriptor_unknown");
    if (refused.ok) return;
    const port = Number(/port (\d+)/.exec(refused.error.message)?.[1]);
    expect(port).toBeGreaterThan(0);
    // Given back: gw binds that port itself next.
    const again = unwrap(await openUdpOnMainThread(libc, "127.0.0.1", port));
    expect(again.port).toBe(port);
    again.close();
  });

  test.skipIf(!onDeno)("a taken port is udp_port_in_use, as with every UDP adapter", async () => {
    const { loadDenoLibc } = await import("../../../src/runtime/deno/libc.ts");
    const { openUdpOnMainThread } = await import("../../../src/runtime/deno/udp-main-thread.ts");
    const libc = loadDenoLibc();
    const first = unwrap(await openUdpOnMainThread(libc, "127.0.0.1", 0));
    const second = await openUdpOnMainThread(libc, "127.0.0.1", first.port);
    expect(second.ok ? "bound" : second.error.code).toBe("udp_port_in_use");
    first.close();
  });
});
