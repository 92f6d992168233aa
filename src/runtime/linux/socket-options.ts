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
