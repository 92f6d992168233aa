/**
 * A small classic BPF interpreter for the instructions the steering program uses, reading
 * SKF_NET_OFF loads from a given IP header: an executable check of the program's bytes that does
 * not share code with reuseport-steering.ts. Throws on any other instruction or a bad load.
 */
const SKF_NET_OFF = -0x100000;

export function runCbpf(program: Uint8Array, ipHeader: Uint8Array): number {
  const view = new DataView(program.buffer, program.byteOffset, program.byteLength);
  const header = new DataView(ipHeader.buffer, ipHeader.byteOffset, ipHeader.byteLength);
  const count = program.byteLength / 8;
  let a = 0;
  let x = 0;
  const netOffset = (k: number, size: number) => {
    const at = (k | 0) - SKF_NET_OFF;
    if (at < 0 || at + size > ipHeader.byteLength) throw new Error(`load outside the IP header at ${k | 0}`);
    return at;
  };
  for (let pc = 0; pc < count; pc++) {
    const code = view.getUint16(pc * 8, true);
    const jt = view.getUint8(pc * 8 + 2);
    const jf = view.getUint8(pc * 8 + 3);
    const k = view.getUint32(pc * 8 + 4, true);
    const operand = code & 0x08 ? x : k;
    switch (code) {
      case 0x30: a = header.getUint8(netOffset(k, 1)); break; // ld b abs
      case 0x20: a = header.getUint32(netOffset(k, 4)); break; // ld w abs (network order)
      case 0x07: x = a; break; // tax
      case 0x74: case 0x7c: a = a >>> (operand & 31); break; // rsh
      case 0x24: case 0x2c: a = Math.imul(a, operand) >>> 0; break; // mul
      case 0xa4: case 0xac: a = (a ^ operand) >>> 0; break; // xor
      case 0x94: case 0x9c: a = a % operand; break; // mod
      case 0x05: pc += k; break; // ja
      case 0x15: pc += a === k ? jt : jf; break; // jeq k
      case 0x16: return a; // ret a
      default: throw new Error(`instruction ${code.toString(16)} at ${pc} not understood`);
    }
  }
  throw new Error("program ran off its end");
}

/** A minimal IPv4 or IPv6 header with this source address (parsed bytes). */
export function ipHeaderFrom(source: Uint8Array): Uint8Array {
  if (source.length === 4) {
    const h = new Uint8Array(20);
    h[0] = 0x45;
    h.set(source, 12);
    return h;
  }
  const h = new Uint8Array(40);
  h[0] = 0x60;
  h.set(source, 8);
  return h;
}
