/**
 * What gw's own UDP sends need from Linux's ABI, a GSO sendmsg and a plain sendmmsg (x86-64 and
 * aarch64 are both LP64 little-endian, so one layout serves both): the option, the flag, the byte
 * offsets of msghdr, mmsghdr, cmsghdr and iovec, and what a refused send means.
 */
export const SOL_UDP = 17;
export const UDP_SEGMENT = 103;
export const MSG_DONTWAIT = 0x40;
/** The largest UDP payload (IPv6's; IPv4's is 20 bytes less): room for any datagram a read returns. */
export const UDP_PAYLOAD_MAX = 65_527;

export const MSGHDR = { name: 0, namelen: 8, iov: 16, iovlen: 24, control: 32, controllen: 40, flags: 48, bytes: 56 } as const;
export const IOVEC = { base: 0, len: 8, bytes: 16 } as const;
/** A 64-bit field (a pointer or a size, below 2^53) at byte `offset` of a block seen as 32-bit words, without BigInt. */
export function writeWord64(words: Uint32Array, offset: number, value: number): void {
  words[offset >> 2] = value >>> 0;
  words[(offset >> 2) + 1] = (value / 2 ** 32) >>> 0;
}

/** struct mmsghdr: a msghdr, then the kernel's count of bytes sent, padded to 8. */
export const MMSGHDR = { hdr: 0, len: 56, bytes: 64 } as const;
/** cmsghdr is { size_t len; int level; int type; } then the data, aligned to 8. */
export const CMSG = { len: 0, level: 8, type: 12, data: 16 } as const;
/** CMSG_LEN(sizeof(u16)) and CMSG_SPACE(sizeof(u16)). */
export const CMSG_SEGMENT_LEN = 18;
export const CMSG_SEGMENT_SPACE = 24;

const EINTR = 4;
const EIO = 5;
const EAGAIN = 11;
const EINVAL = 22;
const ENOPROTOOPT = 92;
const ENOBUFS = 105;

/**
 * What a refused GSO send means for the datagrams in it:
 * - "drop": the socket's buffer is full (EAGAIN, ENOBUFS), as a plain send would find it; count them lost.
 * - "unsupported": this kernel, socket or route cannot do UDP GSO (EINVAL, EIO, ENOPROTOOPT); stop trying.
 * - "plain": something about this one send (EMSGSIZE when a segment exceeds the route's MTU, a
 *   pending ICMP error such as ECONNREFUSED, EINTR): send these datagrams one by one instead.
 */
export type GsoFailure = "drop" | "unsupported" | "plain";

export function classifyGsoFailure(errno: number): GsoFailure {
  if (errno === EAGAIN || errno === ENOBUFS) return "drop";
  if (errno === EINVAL || errno === EIO || errno === ENOPROTOOPT) return "unsupported";
  return "plain";
}

/**
 * What a refused datagram in a sendmmsg means for the ones after it: "full" (EAGAIN, ENOBUFS: the
 * socket's buffer is full, the rest would fail too), "again" (EINTR: try the same one again),
 * "skip" (anything else concerns this datagram or its peer, such as a pending ICMP error or
 * EMSGSIZE: it is lost, the rest still go).
 */
export type PlainSendFailure = "full" | "again" | "skip";

export function classifyPlainFailure(errno: number): PlainSendFailure {
  if (errno === EAGAIN || errno === ENOBUFS) return "full";
  if (errno === EINTR) return "again";
  return "skip";
}
