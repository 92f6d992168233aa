import { describe, expect, test } from "bun:test";
import { asm, assemble, BPF_FUNC_MAP_LOOKUP_ELEM } from "../../../../src/runtime/linux/bpf-insn.ts";

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(" ");

/**
 * Expected bytes from the kernel's encoding (Documentation/bpf/standardization/instruction-set.rst,
 * include/uapi/linux/bpf.h): code = operation | source | class; then dst_reg in the low nibble
 * and src_reg in the high nibble of byte 1; off (s16) and imm (s32) little-endian.
 */
describe("eBPF instruction encoding", () => {
  test("mov r0, 0; exit: the smallest program (BPF_ALU64|BPF_MOV|BPF_K = 0xb7, BPF_JMP|BPF_EXIT = 0x95)", () => {
    expect(hex(assemble([asm.movImm(0, 0), asm.exit()]))).toBe("b7 00 00 00 00 00 00 00 95 00 00 00 00 00 00 00");
  });

  test("registers: dst in the low nibble, src in the high one (r6 = r1: 0xbf, regs 0x16)", () => {
    expect(hex(assemble([asm.movReg(6, 1)]))).toBe("bf 16 00 00 00 00 00 00");
  });

  test("legacy packet loads: BPF_LD|BPF_ABS with the size (W 0x20, B 0x30) and the offset in imm", () => {
    expect(hex(assemble([asm.loadPacketWord(16), asm.loadPacketByte(0)]))).toBe("20 00 00 00 10 00 00 00 30 00 00 00 00 00 00 00");
  });

  test("a 64-bit map load takes two slots: 0x18, src_reg BPF_PSEUDO_MAP_FD (1), the fd in the first imm", () => {
    expect(hex(assemble(asm.loadMap(1, 5)))).toBe("18 11 00 00 05 00 00 00 00 00 00 00 00 00 00 00");
  });

  test("store and load of a word with a negative offset (stx 0x63, ldx 0x61; off -4 = fc ff)", () => {
    expect(hex(assemble([asm.storeWord(10, -4, 0), asm.loadWord(0, 0, 0)]))).toBe("63 0a fc ff 00 00 00 00 61 00 00 00 00 00 00 00");
  });

  test("immediates above 2^31 are written as their 32 bits (32-bit sub 0x14, jmp32 jne 0x56)", () => {
    const code = assemble([asm.sub32Imm(0, 0xc0a80000), asm.jumpIfNe32(0, 0x20010db8, "end"), asm.label("end")]);
    expect(hex(code)).toBe("14 00 00 00 00 00 a8 c0 56 00 00 00 b8 0d 01 20");
  });

  test("helper call: BPF_JMP|BPF_CALL (0x85) with the helper number in imm", () => {
    expect(hex(assemble([asm.call(BPF_FUNC_MAP_LOOKUP_ELEM)]))).toBe("85 00 00 00 01 00 00 00");
  });
});

describe("labels", () => {
  const offsetOf = (code: Uint8Array, slot: number) => new DataView(code.buffer).getInt16(slot * 8 + 2, true);

  test("a jump's offset counts slots from the next instruction, a map load as two", () => {
    const code = assemble([asm.jumpIfEq(0, 4, "end"), ...asm.loadMap(1, 3), asm.movImm(0, 1), asm.label("end"), asm.exit()]);
    expect(offsetOf(code, 0)).toBe(3);
    expect(code[0]).toBe(0x15); // BPF_JMP|BPF_JEQ|BPF_K
  });

  test("a backward jump has a negative offset", () => {
    const code = assemble([asm.label("top"), asm.movImm(0, 0), asm.jump("top")]);
    expect(offsetOf(code, 1)).toBe(-2);
    expect(code[8]).toBe(0x05); // BPF_JMP|BPF_JA
  });

  test("a jump to a label that does not exist is a bug: it throws", () => {
    expect(() => assemble([asm.jump("nowhere")])).toThrow("nowhere");
  });
});
