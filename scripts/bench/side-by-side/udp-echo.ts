/**
 * A request and its answer through the tunnel from a program, not the kernel: `serve` echoes UDP
 * datagrams (run in the LAN namespace), `ping` sends one every 10 ms and prints the median round
 * trip in ms. A kernel's ICMP echo comes back inside the gateway's own TUN write when the LAN host
 * shares the machine; a program's answer comes later, as a real server's does, so the gateway
 * reads it from the TUN as it arrives (rtt-side-by-side.sh's ECHO=udp).
 *   bun udp-echo.ts serve PORT
 *   bun udp-echo.ts ping HOST PORT [COUNT] [INTERVAL_MS]
 */
export {};

const [mode, a, b, c, d] = process.argv.slice(2);

if (mode === "serve") {
  const port = Number(a);
  await Bun.udpSocket({
    port,
    socket: {
      data(socket, data, fromPort, fromAddress) {
        socket.send(data, fromPort, fromAddress);
      },
      // An answer the kernel could not deliver (ICMP) comes back as an error: it concerns one datagram.
      error(_socket, error) {
        console.error(`udp-echo serve: ${error.message}`);
      },
    },
  });
} else if (mode === "ping") {
  const host = a!;
  const port = Number(b);
  const count = Number(c ?? 300);
  const intervalMs = Number(d ?? 10);
  const rtts: number[] = [];
  let sentAt = 0;
  let waiting = -1;
  const socket = await Bun.udpSocket({
    socket: {
      data(_socket, data) {
        const seq = new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(0);
        if (seq === waiting) {
          rtts.push(performance.now() - sentAt);
          waiting = -1;
        }
      },
      error(_socket, error) {
        console.error(`udp-echo ping: ${error.message}`);
      },
    },
  });
  const datagram = new Uint8Array(64);
  for (let seq = 0; seq < count; seq++) {
    new DataView(datagram.buffer).setUint32(0, seq);
    waiting = seq;
    sentAt = performance.now();
    socket.send(datagram, port, host);
    await Bun.sleep(intervalMs);
  }
  socket.close();
  rtts.sort((x, y) => x - y);
  if (rtts.length === 0) console.log("null");
  else console.log((rtts[Math.floor((rtts.length - 1) / 2)]!).toFixed(3));
  if (rtts.length < count * 0.9) console.error(`udp-echo: ${count - rtts.length} of ${count} answers missing`);
} else {
  console.error("usage: udp-echo.ts serve PORT | ping HOST PORT [COUNT] [INTERVAL_MS]");
  process.exit(2);
}
