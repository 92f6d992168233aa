/** setsockopt levels and names for the UDP socket's buffers (asm-generic values, x86-64 and aarch64). */
export const SOL_SOCKET = 1;
export const SO_RCVBUF = 8;
/** Like SO_RCVBUF but past net.core.rmem_max; needs CAP_NET_ADMIN. */
export const SO_RCVBUFFORCE = 33;

/**
 * The receive buffer the gateway asks for on its DTLS socket. The kernel's default (about 208 KiB,
 * some 90 full-size records once each datagram's overhead is counted) overflowed under one
 * openconnect uploading through DTLS: ~6,000 datagrams/s dropped at the socket (UdpRcvbufErrors),
 * TCP inside backed off. 4 MiB is memory used only while the main thread is behind.
 */
export const UDP_RECEIVE_BUFFER_BYTES = 4 << 20;

/** The two int socket-option calls raiseReceiveBuffer makes, as each runtime's FFI binds them. */
export interface IntSocketOptions {
  /** 0, or -1 (errno). */
  setIntOption(fd: number, level: number, name: number, value: number): number;
  /** The value, or -1. */
  getIntOption(fd: number, level: number, name: number): number;
}

/**
 * A receive buffer that absorbs an upload burst (see UDP_RECEIVE_BUFFER_BYTES): past rmem_max when
 * root, else up to it. Returns SO_RCVBUF as the kernel reports it (twice the bytes asked: it
 * counts overhead), or -1.
 */
export function raiseReceiveBuffer(libc: IntSocketOptions, fd: number): number {
  if (libc.setIntOption(fd, SOL_SOCKET, SO_RCVBUFFORCE, UDP_RECEIVE_BUFFER_BYTES) !== 0) {
    libc.setIntOption(fd, SOL_SOCKET, SO_RCVBUF, UDP_RECEIVE_BUFFER_BYTES);
  }
  return libc.getIntOption(fd, SOL_SOCKET, SO_RCVBUF);
}
