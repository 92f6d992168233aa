/**
 * Which member of a SO_REUSEPORT group takes a client's packets, chosen from the client's source
 * address only (never its port), so its TLS connection (TCP) and its DTLS datagrams (UDP) reach
 * the same worker. Two forms of one function: the classic BPF program the kernel runs for every
 * TCP SYN / UDP datagram (SO_ATTACH_REUSEPORT_CBPF), and steeringIndex, the same arithmetic in
 * TypeScript, so the main process can predict placement and the tests can compare.
 *
 * The hash: the source address as one 32-bit word (IPv4: the address; IPv6: the xor of its four
 * words), mixed with two xor-shift-multiply rounds so that consecutive addresses (203.0.113.10,
 * .11, ...) spread over all members instead of following a pattern in their low bits, then mod N.
 */
import { err, ok, type Result } from "../../errors.ts";
import { parseIpv4, parseIpv6 } from "./sockaddr.ts";

/** The kernel keeps a group's size in a u16 (struct sock_reuseport num_socks). */
export const MAX_STEERING_MEMBERS = 0xffff;

/** Bytes of one struct sock_filter { u16 code; u8 jt; u8 jf; u32 k }. */
export const SOCK_FILTER_BYTES = 8;

/** Multipliers of the mixing rounds (odd, with well-spread bits: each input bit moves many output bits). */
const MIX_MULTIPLIER_1 = 0x7feb352d;
const MIX_MULTIPLIER_2 = 0x846ca68b;

/**
 * The member index for a client at `sourceAddress` in a group of `members` sockets, as the
 * program computes it; -1 when the text is not an IPv4/IPv6 address or members is out of range.
 *
 * An IPv4-mapped IPv6 address (::ffff:203.0.113.10) gives the index of its IPv4 form: a dual-stack
 * (IPV6_V6ONLY 0) socket reports an IPv4 client that way, but the packet the kernel steers is an
 * IPv4 packet, so the program reads the IPv4 header. (A native IPv6 packet whose source is a
 * mapped address is not valid on the wire; TCP over IPv6 refuses such a SYN before any lookup.)
 */
export function steeringIndex(sourceAddress: string, members: number): number {
  if (!validMembers(members)) return -1;
  const word = sourceWord(sourceAddress);
  if (word === null) return -1;
  return mix(word) % members;
}

/** The 32-bit word the program hashes for this address (see steeringIndex), or null. */
export function sourceWord(address: string): number | null {
  const v4 = parseIpv4(address);
  if (v4 !== null) return wordAt(v4, 0);
  const v6 = parseIpv6(address);
  if (v6 === null) return null;
  if (isV4Mapped(v6)) return wordAt(v6, 12);
  return (wordAt(v6, 0) ^ wordAt(v6, 4) ^ wordAt(v6, 8) ^ wordAt(v6, 12)) >>> 0;
}

/** The mixing rounds, in 32-bit unsigned arithmetic like the program's A register. */
export function mix(word: number): number {
  let h = word >>> 0;
  h = (h ^ (h >>> 16)) >>> 0;
  h = Math.imul(h, MIX_MULTIPLIER_1) >>> 0;
  h = (h ^ (h >>> 15)) >>> 0;
  h = Math.imul(h, MIX_MULTIPLIER_2) >>> 0;
  h = (h ^ (h >>> 16)) >>> 0;
  return h;
}

// Classic BPF opcodes (include/uapi/linux/bpf_common.h, filter.h).
const BPF_LD = 0x00;
const BPF_ALU = 0x04;
const BPF_JMP = 0x05;
const BPF_RET = 0x06;
const BPF_MISC = 0x07;
const BPF_W = 0x00;
const BPF_B = 0x10;
const BPF_ABS = 0x20;
const BPF_MUL = 0x20;
const BPF_RSH = 0x70;
const BPF_MOD = 0x90;
const BPF_XOR = 0xa0;
const BPF_JA = 0x00;
const BPF_JEQ = 0x10;
const BPF_K = 0x00;
const BPF_X = 0x08;
const BPF_A = 0x10;
const BPF_TAX = 0x00;

/**
 * In a reuseport program the packet data starts after the TCP/UDP header (the kernel pulls it
 * before running the program: net/core/sock_reuseport.c run_bpf_filter); the IP header is
 * reached at this negative offset plus the offset inside it.
 */
const SKF_NET_OFF = -0x100000;
const IP_VERSION_BYTE = 0;
const IPV4_SOURCE = 12;
const IPV6_SOURCE = 8;

interface Instruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

const op = (code: number, k = 0, jt = 0, jf = 0): Instruction => ({ code, jt, jf, k });
const loadWord = (netOffset: number) => op(BPF_LD | BPF_W | BPF_ABS, SKF_NET_OFF + netOffset);
const loadByte = (netOffset: number) => op(BPF_LD | BPF_B | BPF_ABS, SKF_NET_OFF + netOffset);
const tax = () => op(BPF_MISC | BPF_TAX);
const xorX = () => op(BPF_ALU | BPF_XOR | BPF_X);
/** A ^= A >> shift (X is scratch). */
const xorShift = (shift: number) => [tax(), op(BPF_ALU | BPF_RSH | BPF_K, shift), xorX()];

/** The program's instructions for a group of `members` sockets (see the module comment). */
function instructions(members: number): Instruction[] {
  // IPv6: the xor of the source's four words, accumulated in A with X as scratch.
  const ipv6 = [loadWord(IPV6_SOURCE)];
  for (let word = 1; word < 4; word++) ipv6.push(tax(), loadWord(IPV6_SOURCE + word * 4), xorX());
  // IPv4 (also any version that is not 6): the source word, then jump over the IPv6 part.
  const ipv4 = [loadWord(IPV4_SOURCE), op(BPF_JMP | BPF_JA, ipv6.length)];
  const mixing = [
    ...xorShift(16),
    op(BPF_ALU | BPF_MUL | BPF_K, MIX_MULTIPLIER_1),
    ...xorShift(15),
    op(BPF_ALU | BPF_MUL | BPF_K, MIX_MULTIPLIER_2),
    ...xorShift(16),
    op(BPF_ALU | BPF_MOD | BPF_K, members),
    op(BPF_RET | BPF_A),
  ];
  return [
    loadByte(IP_VERSION_BYTE),
    op(BPF_ALU | BPF_RSH | BPF_K, 4),
    // Version 6 jumps over the IPv4 part; anything else falls into it.
    op(BPF_JMP | BPF_JEQ | BPF_K, 6, ipv4.length, 0),
    ...ipv4,
    ...ipv6,
    ...mixing,
  ];
}

/**
 * The program as the bytes of its struct sock_filter array (host byte order: little-endian on
 * x86-64 and aarch64, the targets), ready for SO_ATTACH_REUSEPORT_CBPF.
 */
export function steeringProgram(members: number): Result<Uint8Array> {
  if (!validMembers(members)) {
    return err("steering_failed", `a steered group needs 1 to ${MAX_STEERING_MEMBERS} members, not ${members}: fix the worker count`);
  }
  const program = instructions(members);
  const bytes = new Uint8Array(program.length * SOCK_FILTER_BYTES);
  const view = new DataView(bytes.buffer);
  program.forEach((instruction, i) => {
    const at = i * SOCK_FILTER_BYTES;
    view.setUint16(at, instruction.code, true);
    view.setUint8(at + 2, instruction.jt);
    view.setUint8(at + 3, instruction.jf);
    view.setUint32(at + 4, instruction.k >>> 0, true);
  });
  return ok(bytes);
}

function validMembers(members: number): boolean {
  return Number.isInteger(members) && members >= 1 && members <= MAX_STEERING_MEMBERS;
}

function wordAt(bytes: Uint8Array, at: number): number {
  return ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
}

function isV4Mapped(v6: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (v6[i] !== 0) return false;
  return v6[10] === 0xff && v6[11] === 0xff;
}
