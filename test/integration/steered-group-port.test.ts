import { describe, expect, test } from "bun:test";
import { connect, createServer } from "node:net";
import { loadReuseportLibc } from "../../src/runtime/reuseport-libc.ts";
import { closeSteeredGroup, openSteeredGroup, type SteeredGroup } from "../../src/runtime/linux/steered-group.ts";

/**
 * Who may hold the tunnel port, on the real kernel (127.0.0.1, ports the kernel picks): a steered
 * group keeps out a second one (whose members would otherwise join it) and a plain listener, and
 * takes the port back right after it was closed, also with a connection of its own in TIME_WAIT.
 */
const loaded = await loadReuseportLibc();
if (!loaded.ok) throw loaded.error;
const libc = loaded.value;

function group(kind: "tcp" | "udp", port: number): SteeredGroup {
  const opened = openSteeredGroup(libc, { host: "127.0.0.1", port, members: 2, kind });
  if (!opened.ok) throw opened.error;
  return opened.value;
}

describe.skipIf(process.platform !== "linux")("a steered group and the port it holds", () => {
  for (const kind of ["tcp", "udp"] as const) {
    test(`${kind}: a second group on the same port is port_in_use, and the port is free again once the first is closed`, () => {
      const first = group(kind, 0);
      const second = openSteeredGroup(libc, { host: "127.0.0.1", port: first.port, members: 2, kind });
      expect(!second.ok && second.error.code).toBe("port_in_use");
      if (!second.ok) expect(second.error.message).toContain(`${kind.toUpperCase()} 127.0.0.1:${first.port} is already in use`);
      // Also as ::, which takes IPv4 clients of the port too.
      const dual = openSteeredGroup(libc, { host: "::", port: first.port, members: 2, kind });
      expect(!dual.ok && dual.error.code).toBe("port_in_use");
      closeSteeredGroup(libc, first);
      const again = group(kind, first.port);
      expect(again.port).toBe(first.port);
      closeSteeredGroup(libc, again);
    });
  }

  test("tcp: a plain listener on the port keeps a group out", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    const refused = openSteeredGroup(libc, { host: "127.0.0.1", port, members: 2, kind: "tcp" });
    expect(!refused.ok && refused.error.code).toBe("port_in_use");
    await new Promise((resolve) => server.close(resolve));
  });

  test("tcp: a group that served a connection and was closed opens again at once (its connection in TIME_WAIT does not hold the port)", async () => {
    const first = group("tcp", 0);
    const server = createServer((socket) => socket.end("hi\n"));
    await new Promise<void>((resolve) => server.listen({ fd: first.fds[0]! }, resolve));
    const other = createServer((socket) => socket.end("hi\n"));
    await new Promise<void>((resolve) => other.listen({ fd: first.fds[1]! }, resolve));
    // The server closes first (end), so the server side's end of the connection is what waits.
    const answer = await new Promise<string>((resolve) => {
      let text = "";
      const socket = connect({ host: "127.0.0.1", port: first.port });
      socket.on("data", (chunk) => (text += chunk));
      socket.on("close", () => resolve(text));
    });
    expect(answer).toBe("hi\n");
    // Closing the servers closes the descriptors they adopted: the group is gone with them.
    await Promise.all([new Promise((r) => server.close(r)), new Promise((r) => other.close(r))]);
    const again = group("tcp", first.port);
    expect(again.port).toBe(first.port);
    closeSteeredGroup(libc, again);
  });
});
