import { asm, assemble, BPF_FUNC_MAP_LOOKUP_ELEM, type Insn } from "./bpf-insn.ts";

/**
 * The TUN steering program (BPF_PROG_TYPE_SOCKET_FILTER, attached with TUNSETSTEERINGEBPF): for
 * each packet the kernel sends into a multi-queue TUN device it returns the index of the queue
 * that must read it, taken from a map the main process fills as sessions are placed on workers.
 * The kernel takes the result modulo the number of queues (tun.c, tun_ebpf_select_queue).
 *
 * A TUN device has no link header, so the packet starts with the IP header:
 *   IPv4: destination at byte 16; key = destination - pool base (u32), looked up in an ARRAY
 *         map of `size` entries (an address with no placement holds 0, so it goes to queue 0).
 *   IPv6: destination at bytes 24..39; the first three words must be the pool's (every lease
 *         shares them, see address-pool6.ts); key = the last word, looked up in a HASH map.
 * Anything else (another version, outside the pools, no entry, too short) goes to queue 0.
 */
export interface SteeringProgramLayout {
  map4Fd: number;
  /** The pool's network address as a number (host order: 10.0.0.0 is 0x0a000000). */
  base4: number;
  /** Entries in the IPv4 map: addresses base4 .. base4 + size - 1 can be placed. */
  size4: number;
  /** The IPv6 part, when there is an IPv6 pool. */
  v6?: { mapFd: number; base: readonly [number, number, number] };
}

const IPV4_DESTINATION = 16;
const IPV6_DESTINATION = 24;
/** The map key lives just below the frame pointer. */
const KEY_SLOT = -4;

export function steeringProgram(layout: SteeringProgramLayout): Uint8Array {
  const v6 = layout.v6;
  const program: Insn[] = [
    asm.movReg(6, 1), // packet loads read the context (the skb) from r6
    asm.loadPacketByte(0),
    asm.rshImm(0, 4), // IP version
    asm.jumpIfEq(0, 4, "ipv4"),
    ...(v6 ? [asm.jumpIfEq(0, 6, "ipv6")] : []),
    asm.jump("queue0"),

    asm.label("ipv4"),
    asm.loadPacketWord(IPV4_DESTINATION),
    asm.sub32Imm(0, layout.base4),
    asm.jumpIfGe(0, layout.size4, "queue0"),
    asm.storeWord(10, KEY_SLOT, 0),
    ...asm.loadMap(1, layout.map4Fd),
    asm.jump("lookup"),

    ...(v6
      ? [
          asm.label("ipv6"),
          ...v6.base.flatMap((word, i) => [asm.loadPacketWord(IPV6_DESTINATION + 4 * i), asm.jumpIfNe32(0, word, "queue0")]),
          asm.loadPacketWord(IPV6_DESTINATION + 12),
          asm.storeWord(10, KEY_SLOT, 0),
          ...asm.loadMap(1, v6.mapFd),
        ]
      : []),

    asm.label("lookup"), // r1 = the map, the key at r10 + KEY_SLOT
    asm.movReg(2, 10),
    asm.addImm(2, KEY_SLOT),
    asm.call(BPF_FUNC_MAP_LOOKUP_ELEM),
    asm.jumpIfEq(0, 0, "queue0"), // no entry (only the hash map can miss)
    asm.loadWord(0, 0, 0),
    asm.exit(),

    asm.label("queue0"),
    asm.movImm(0, 0),
    asm.exit(),
  ];
  return assemble(program);
}
