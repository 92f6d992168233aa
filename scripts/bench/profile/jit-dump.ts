/**
 * JavaScriptCore's JIT dump (the jitdump format perf defines, written by Bun when started with
 * BUN_JSC_useJITDump=1 and BUN_JSC_jitDumpDirectory=DIR): the code-load records, which name each
 * piece of JIT code by its address range. `perf inject --jit` does not pick Bun's dump up, so the
 * profile reader (perf-by-function.ts) names `perf script` frames with these ranges itself.
 *
 * JavaScriptCore reuses the memory of code it threw away (a lower tier's code once the function
 * is compiled again higher, code of functions no longer used) and the dump has no unload records:
 * in a 4,000-session run, 381 of 3,324 loads went to an address loaded before. So an address is
 * named by the code loaded there last before the sample was taken: each load's timestamp and
 * perf's sample times are the same clock (CLOCK_MONOTONIC). Without that, samples in reused
 * memory went to whichever old load the search met first (zod's `sizeCaps`, compiled once at
 * start, came out as a fifth of an idle gateway's samples).
 */

const FILE_HEADER_MAGIC = 0x4a695444; // "JiTD" as a little-endian u32
const RECORD_CODE_LOAD = 0;
const RECORD_HEADER_BYTES = 16; // id u32, total_size u32, timestamp u64
const CODE_LOAD_FIELDS_BYTES = 40; // pid u32, tid u32, vma u64, code_addr u64, code_size u64, code_index u64

export interface JitCode {
  start: bigint;
  size: bigint;
  name: string;
  /** When the code was loaded: ns of CLOCK_MONOTONIC, as perf's sample times. */
  loadedAt: bigint;
}

/** The code-load records of a dump, sorted by address; throws on a file that is not a jitdump. */
export function readJitDump(bytes: Uint8Array): JitCode[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 40 || view.getUint32(0, true) !== FILE_HEADER_MAGIC) throw new Error("not a jitdump file (no JiTD header)");
  const decoder = new TextDecoder();
  const codes: JitCode[] = [];
  let offset = view.getUint32(8, true); // the header's own size
  while (offset + RECORD_HEADER_BYTES <= bytes.byteLength) {
    const id = view.getUint32(offset, true);
    const total = view.getUint32(offset + 4, true);
    if (total < RECORD_HEADER_BYTES || offset + total > bytes.byteLength) break; // a record cut short: the process was still writing
    if (id === RECORD_CODE_LOAD) {
      const at = offset + RECORD_HEADER_BYTES;
      const start = view.getBigUint64(at + 16, true);
      const size = view.getBigUint64(at + 24, true);
      const nameAt = at + CODE_LOAD_FIELDS_BYTES;
      let nameEnd = nameAt;
      while (nameEnd < offset + total && bytes[nameEnd] !== 0) nameEnd++;
      codes.push({ start, size, name: decoder.decode(bytes.subarray(nameAt, nameEnd)), loadedAt: view.getBigUint64(offset + 8, true) });
    }
    offset += total;
  }
  return codes.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
}

/**
 * Finds the JIT code holding an address at a time: of the loads whose range holds it, the last one
 * loaded by then (the latest of all when no time is given; the earliest when all came later,
 * which a clock mismatch would cause). A binary search to the last load starting at or below the
 * address, then back over the loads that start within the longest code's size of it.
 */
export class JitNames {
  private readonly longest: bigint;

  constructor(private readonly codes: JitCode[]) {
    this.longest = codes.reduce((max, code) => (code.size > max ? code.size : max), 0n);
  }

  nameOf(address: bigint, at?: bigint): string | undefined {
    let low = 0;
    let high = this.codes.length - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      if (this.codes[mid]!.start <= address) low = mid + 1;
      else high = mid - 1;
    }
    let best: JitCode | undefined;
    let earliest: JitCode | undefined;
    for (let i = high; i >= 0 && this.codes[i]!.start + this.longest > address; i--) {
      const code = this.codes[i]!;
      if (address >= code.start + code.size) continue;
      if (earliest === undefined || code.loadedAt < earliest.loadedAt) earliest = code;
      if (at !== undefined && code.loadedAt > at) continue;
      if (best === undefined || code.loadedAt > best.loadedAt) best = code;
    }
    return (best ?? earliest)?.name;
  }
}

/** "JSC-DFG: onDatagram#CtPTMN" -> "onDatagram"; thunks and caches keep their kind ("JSC-Thunk: FFI invoke"). */
export function functionName(jitName: string): string {
  const colon = jitName.indexOf(": ");
  if (!jitName.startsWith("JSC-") || colon < 0) return jitName;
  const kind = jitName.slice(4, colon);
  const rest = jitName.slice(colon + 2);
  if (kind.includes("Thunk") || kind.includes("InlineCache") || kind.includes("CTI")) return jitName;
  const hash = rest.lastIndexOf("#");
  if (hash === 0) return `(anonymous ${rest})`;
  return hash > 0 ? rest.slice(0, hash) : rest;
}
