import type { UdpSocket } from "../runtime/udp.ts";

/**
 * The same socket, with `after` called once each received datagram has been handled: the data
 * plane writes the datagram's upstream packets to the TUN in one batch there.
 */
export function afterEachDatagram(udp: UdpSocket, after: () => void): UdpSocket {
  return {
    get port() {
      return udp.port;
    },
    send: (data, port, address) => udp.send(data, port, address),
    sendMany: (batch) => udp.sendMany(batch),
    onDatagram: (handler) =>
      udp.onDatagram((data, port, address) => {
        handler(data, port, address);
        after();
      }),
    close: () => udp.close(),
  };
}
