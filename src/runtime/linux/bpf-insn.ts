/**
 * A tiny eBPF assembler: just the instructions the TUN steering program uses, and jumps to named
 * labels resolved when the program is put together. Each instruction is struct bpf_insn
 * (linux/bpf.h), 8 bytes: u8 code; u8 dst_reg:4 (low nibble), src_reg:4 (high nibble); s16 off;
 * s32 imm. Bytes in little-endian order: the only targets (x86-64, aarch64) are little-endian,
 * and the kernel reads the struct in host order.
 */

/** Instruction classes (low 3 bits of code). */
const BPF_LD = 0x00;
const BPF_LDX = 0x01;
const BPF_STX = 0x03;
const BPF_ALU = 0x04; // 32-bit: writes the low half and zeroes the upper half of dst
const BPF_JMP = 0x05;
const BPF_JMP32 = 0x06; // compares the low 32 bits only
const BPF_ALU64 = 0x07;
/** Sizes and modes for loads and stores. */
const BPF_W = 0x00;
const BPF_B = 0x10;
const BPF_DW = 0x18;
const BPF_IMM = 0x00;
const BPF_ABS = 0x20;
const BPF_MEM = 0x60;
/** Operand source: the immediate (K) or a register (X). */
const BPF_K = 0x00;
const BPF_X = 0x08;
/** ALU and jump operations (high 4 bits of code). */
const BPF_ADD = 0x00;
const BPF_SUB = 0x10;
const BPF_RSH = 0x70;
const BPF_MOV = 0xb0;
const BPF_JA = 0x00;
const BPF_JEQ = 0x10;
const BPF_JGE = 0x30; // unsigned >=
const BPF_JNE = 0x50;
const BPF_CALL = 0x80;
const BPF_EXIT = 0x90;
/** src_reg of a 64-bit immediate load that makes the kernel swap a map fd for the map's address. */
const BPF_PSEUDO_MAP_FD = 1;

export const INSN_BYTES = 8;

/** r0 return value, r1-r5 arguments (clobbered by calls), r6-r9 kept across calls, r10 frame pointer. */
export type Reg = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10;

/** One 8-byte slot, or a jump whose offset is known only once the labels are placed. */
export type Insn =
  | { kind: "insn"; code: number; dst: Reg; src: number; off: number; imm: number }
  | { kind: "jump"; code: number; dst: Reg; imm: number; to: string }
  | { kind: "label"; name: string };

const insn = (code: number, dst: Reg, src: number, off: number, imm: number): Insn => ({ kind: "insn", code, dst, src, off, imm });

/** The instructions the steering program needs, named after what they do. */
export const asm = {
  movReg: (dst: Reg, src: Reg) => insn(BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0),
  movImm: (dst: Reg, imm: number) => insn(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm),
  addImm: (dst: Reg, imm: number) => insn(BPF_ALU64 | BPF_ADD | BPF_K, dst, 0, 0, imm),
  rshImm: (dst: Reg, imm: number) => insn(BPF_ALU64 | BPF_RSH | BPF_K, dst, 0, 0, imm),
  /** dst = (u32)(dst - imm): wraps at 32 bits, so an address below the pool base becomes large. */
  sub32Imm: (dst: Reg, imm: number) => insn(BPF_ALU | BPF_SUB | BPF_K, dst, 0, 0, imm | 0),
  /**
   * r0 = the packet's byte or 32-bit word at `offset`, in host order (legacy BPF_LD | BPF_ABS; the
   * context must be in r6; r1-r5 are clobbered). A packet too short for the load ends the
   * program with return value 0.
   */
  loadPacketByte: (offset: number) => insn(BPF_LD | BPF_B | BPF_ABS, 0, 0, 0, offset),
  loadPacketWord: (offset: number) => insn(BPF_LD | BPF_W | BPF_ABS, 0, 0, 0, offset),
  /** *(u32 *)(dst + off) = src */
  storeWord: (dst: Reg, off: number, src: Reg) => insn(BPF_STX | BPF_W | BPF_MEM, dst, src, off, 0),
  /** dst = *(u32 *)(src + off) */
  loadWord: (dst: Reg, src: Reg, off: number) => insn(BPF_LDX | BPF_W | BPF_MEM, dst, src, off, 0),
  /** dst = the map behind `mapFd`: two slots, the second holding the upper 32 bits of the immediate (0). */
  loadMap: (dst: Reg, mapFd: number): Insn[] => [insn(BPF_LD | BPF_DW | BPF_IMM, dst, BPF_PSEUDO_MAP_FD, 0, mapFd), insn(0, 0, 0, 0, 0)],
  call: (helper: number) => insn(BPF_JMP | BPF_CALL, 0, 0, 0, helper),
  exit: () => insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
  jump: (to: string): Insn => ({ kind: "jump", code: BPF_JMP | BPF_JA, dst: 0, imm: 0, to }),
  /** 64-bit compares against the sign-extended immediate. */
  jumpIfEq: (dst: Reg, imm: number, to: string): Insn => ({ kind: "jump", code: BPF_JMP | BPF_JEQ | BPF_K, dst, imm, to }),
  jumpIfGe: (dst: Reg, imm: number, to: string): Insn => ({ kind: "jump", code: BPF_JMP | BPF_JGE | BPF_K, dst, imm, to }),
  /** Compares the low 32 bits with the immediate as a u32 (so words with the top bit set compare right). */
  jumpIfNe32: (dst: Reg, imm: number, to: string): Insn => ({ kind: "jump", code: BPF_JMP32 | BPF_JNE | BPF_K, dst, imm: imm | 0, to }),
  label: (name: string): Insn => ({ kind: "label", name }),
};

/** The kernel's helper numbers (enum bpf_func_id). */
export const BPF_FUNC_MAP_LOOKUP_ELEM = 1;

/**
 * Places the labels, resolves each jump's offset (counted in slots from the next instruction)
 * and encodes the program. A jump to a missing label is a bug in the program, so it throws.
 */
export function assemble(program: readonly Insn[]): Uint8Array {
  const labels = new Map<string, number>();
  let slots = 0;
  for (const i of program) {
    if (i.kind === "label") labels.set(i.name, slots);
    else slots++;
  }
  const out = new Uint8Array(slots * INSN_BYTES);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const i of program) {
    if (i.kind === "label") continue;
    let off = 0;
    if (i.kind === "jump") {
      const target = labels.get(i.to);
      if (target === undefined) throw new Error(`bpf program jumps to unknown label ${i.to}`);
      off = target - (at + 1);
    } else {
      off = i.off;
    }
    const src = i.kind === "insn" ? i.src : 0;
    const base = at * INSN_BYTES;
    view.setUint8(base, i.code);
    view.setUint8(base + 1, (src << 4) | i.dst);
    view.setInt16(base + 2, off, true);
    view.setInt32(base + 4, i.imm | 0, true);
    at++;
  }
  return out;
}
