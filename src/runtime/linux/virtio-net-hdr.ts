/**
 * struct virtio_net_hdr (linux/virtio_net.h), the 10-byte header in front of every packet read
 * from or written to a TUN device opened with IFF_VNET_HDR. Fields are in the host's byte order
 * (little-endian on x86-64 and aarch64, the only targets). With it a write may hand the kernel one
 * TCP "super-packet" of many segments (GSO), which crosses the stack once instead of per segment.
 */
export const VNET_HDR_BYTES = 10;

/** flags: the checksum at csum_start + csum_offset still needs computing (CHECKSUM_PARTIAL). */
export const VNET_F_NEEDS_CSUM = 1;
/** gso_type values. */
export const VNET_GSO_NONE = 0;
export const VNET_GSO_TCPV4 = 1;
export const VNET_GSO_TCPV6 = 4;

/** Byte offsets of the fields. */
export const VNET_FLAGS = 0;
export const VNET_GSO_TYPE = 1;
export const VNET_HDR_LEN = 2;
export const VNET_GSO_SIZE = 4;
export const VNET_CSUM_START = 6;
export const VNET_CSUM_OFFSET = 8;

/** A 16-bit field of the header at `at` (host order: little-endian here), e.g. VNET_GSO_SIZE. */
export const vnetField16 = (data: Uint8Array, at: number, field: number): number => data[at + field]! | (data[at + field + 1]! << 8);

/**
 * Whether the header at `at` asks for nothing: no checksum to complete, no GSO. With the device's
 * read offloads on (tun-config.ts), a read may ask for either; tcp-segmenter.ts does what it asks.
 */
export function isPlainHeader(data: Uint8Array, at: number): boolean {
  return data[at + VNET_FLAGS] === 0 && data[at + VNET_GSO_TYPE] === 0;
}

/** Writes a header into `into` at `at` (little-endian, as the kernel reads it on our targets). */
export function writeVnetHeader(
  into: Uint8Array,
  at: number,
  flags: number,
  gsoType: number,
  hdrLen: number,
  gsoSize: number,
  csumStart: number,
  csumOffset: number,
): void {
  into[at + VNET_FLAGS] = flags;
  into[at + VNET_GSO_TYPE] = gsoType;
  put16le(into, at + VNET_HDR_LEN, hdrLen);
  put16le(into, at + VNET_GSO_SIZE, gsoSize);
  put16le(into, at + VNET_CSUM_START, csumStart);
  put16le(into, at + VNET_CSUM_OFFSET, csumOffset);
}

function put16le(into: Uint8Array, at: number, value: number): void {
  into[at] = value & 0xff;
  into[at + 1] = value >>> 8;
}
