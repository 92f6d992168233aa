/**
 * The ping profile's reader: a JIT dump's code-load records name perf's frames, and each sample
 * lands under the right place, callback and function. A synthetic dump and perf script text.
 */
import { expect, test } from "bun:test";
import { functionName, JitNames, readJitDump } from "../../../scripts/bench/profile/jit-dump.ts";
import { analyse, formatReport, parsePerfScript } from "../../../scripts/bench/profile/perf-by-function.ts";

/** A jitdump as perf's format lays it out: a 40-byte header, then records (here code loads and one other). */
function jitDump(codes: { start: number; size: number; name: string; at?: bigint }[]): Uint8Array {
  const parts: Uint8Array[] = [];
  const header = new DataView(new ArrayBuffer(40));
  header.setUint32(0, 0x4a695444, true);
  header.setUint32(4, 1, true);
  header.setUint32(8, 40, true);
  parts.push(new Uint8Array(header.buffer));
  const other = new DataView(new ArrayBuffer(24)); // a record of another kind (id 3, code close), skipped
  other.setUint32(0, 3, true);
  other.setUint32(4, 24, true);
  parts.push(new Uint8Array(other.buffer));
  for (const code of codes) {
    const name = new TextEncoder().encode(`${code.name}\0`);
    const total = 16 + 40 + name.length + code.size;
    const record = new DataView(new ArrayBuffer(total));
    record.setUint32(0, 0, true);
    record.setUint32(4, total, true);
    record.setBigUint64(8, code.at ?? 0n, true);
    record.setBigUint64(16 + 16, BigInt(code.start), true);
    record.setBigUint64(16 + 24, BigInt(code.size), true);
    new Uint8Array(record.buffer).set(name, 16 + 40);
    parts.push(new Uint8Array(record.buffer));
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) (out.set(p, at), (at += p.length));
  return out;
}

const dump = jitDump([
  { start: 0x7f0000002000, size: 0x100, name: "JSC-DFG: onTunBatch#AbCdEf" },
  { start: 0x7f0000001000, size: 0x100, name: "JSC-Baseline: data#XyZ123" },
  { start: 0x7f0000003000, size: 0x40, name: "JSC-Thunk: FFI invoke" },
]);

test("code loads are read in address order; an address names the code that holds it, nothing outside", () => {
  const codes = readJitDump(dump);
  expect(codes.map((c) => c.name)).toEqual(["JSC-Baseline: data#XyZ123", "JSC-DFG: onTunBatch#AbCdEf", "JSC-Thunk: FFI invoke"]);
  const names = new JitNames(codes);
  expect(names.nameOf(0x7f0000002000n)).toBe("JSC-DFG: onTunBatch#AbCdEf");
  expect(names.nameOf(0x7f00000020ffn)).toBe("JSC-DFG: onTunBatch#AbCdEf");
  expect(names.nameOf(0x7f0000002100n)).toBeUndefined();
  expect(names.nameOf(0x7f0000000fffn)).toBeUndefined();
  expect(() => readJitDump(new Uint8Array(64))).toThrow("not a jitdump");
});

test("function names drop the tier and the hash; glue keeps its kind; an anonymous function keeps its hash", () => {
  expect(functionName("JSC-DFG: onTunBatch#AbCdEf")).toBe("onTunBatch");
  expect(functionName("JSC-FTL: #consume#BUBlqt")).toBe("#consume");
  expect(functionName("JSC-Baseline: #EHiEmQ")).toBe("(anonymous #EHiEmQ)");
  expect(functionName("JSC-Thunk: FFI invoke")).toBe("JSC-Thunk: FFI invoke");
});

test("each sample is placed by its innermost frame, its outermost JavaScript callback and its innermost function", () => {
  const text = [
    // a TUN write: kernel, made by onTunBatch (through an FFI thunk) under the data callback
    "\t    ffffffff81000000 tun_get_user ([kernel.kallsyms])",
    "\t    ffffffff81000100 __x64_sys_write ([kernel.kallsyms])",
    "\t    7f0000003010 [unknown] ([unknown])",
    "\t    7f0000002010 [unknown] ([unknown])",
    "\t    7f0000001010 [unknown] ([unknown])",
    "\t    1843101 [unknown] (/work/main/dist/gw)",
    "",
    // libcrypto called by onTunBatch
    "\t    20c144 EVP_CipherInit_ex (/usr/lib/x86_64-linux-gnu/libcrypto.so.3)",
    "\t    7f0000002020 [unknown] ([unknown])",
    "\t    7f0000001020 [unknown] ([unknown])",
    "",
    // JavaScript itself
    "\t    7f0000001030 [unknown] ([unknown])",
    "\t    1843101 [unknown] (/work/main/dist/gw)",
    "",
    // the event loop waiting: no JavaScript
    "\t    ffffffff81000200 schedule ([kernel.kallsyms])",
    "\t    ffffffff81000300 __x64_sys_epoll_pwait2 ([kernel.kallsyms])",
    "\t    1e04ce6 [unknown] (/work/main/dist/gw)",
    "",
    // the runtime's own code, no JavaScript
    "\t    1bfcce6 [unknown] (/work/main/dist/gw)",
    "",
  ].join("\n");
  const samples = parsePerfScript(text);
  expect(samples.length).toBe(5);
  const report = analyse(samples, new JitNames(readJitDump(dump)));
  expect(Object.fromEntries(report.leaves)).toEqual({ kernel: 2, "libcrypto.so.3": 1, JavaScript: 1, runtime: 1 });
  expect(Object.fromEntries(report.outsideJs)).toEqual({ "system call epoll_pwait2": 1, runtime: 1 });
  expect(Object.fromEntries(report.roots)).toEqual({ data: 3 });
  expect(Object.fromEntries(report.kernelUnder)).toEqual({ onTunBatch: 1 });
  expect(Object.fromEntries(report.userUnder)).toEqual({ onTunBatch: 1, data: 1 });
  const printed = formatReport(report);
  expect(printed).toContain("5 samples");
  expect(printed).toContain(" 60.0 %  data");
  expect(printed).toContain(" 20.0 %  system call epoll_pwait2");
});

test("memory the JIT reused is named by the code loaded there last before the sample, as perf's times say", () => {
  // At 1 s a function is compiled at 0x5000; at 2 s its memory holds another, longer one; at 3 s a
  // third starts inside the second's range.
  const reused = jitDump([
    { start: 0x7f0000005000, size: 0x100, name: "JSC-Baseline: sizeCaps#Old111", at: 1_000_000_000n },
    { start: 0x7f0000005000, size: 0x400, name: "JSC-FTL: onDatagram#New222", at: 2_000_000_000n },
    { start: 0x7f0000005200, size: 0x80, name: "JSC-DFG: receive#Late33", at: 3_000_000_000n },
  ]);
  const names = new JitNames(readJitDump(reused));
  expect(names.nameOf(0x7f0000005010n, 1_500_000_000n)).toBe("JSC-Baseline: sizeCaps#Old111");
  expect(names.nameOf(0x7f0000005010n, 2_500_000_000n)).toBe("JSC-FTL: onDatagram#New222");
  expect(names.nameOf(0x7f0000005210n, 2_500_000_000n)).toBe("JSC-FTL: onDatagram#New222");
  expect(names.nameOf(0x7f0000005210n, 3_500_000_000n)).toBe("JSC-DFG: receive#Late33");
  expect(names.nameOf(0x7f0000005300n, 3_500_000_000n)).toBe("JSC-FTL: onDatagram#New222"); // past the third's end
  expect(names.nameOf(0x7f0000005010n)).toBe("JSC-FTL: onDatagram#New222"); // no time: the latest load
  expect(names.nameOf(0x7f0000005010n, 500_000_000n)).toBe("JSC-Baseline: sizeCaps#Old111"); // before every load: the earliest
  expect(names.nameOf(0x7f0000005400n, 3_500_000_000n)).toBeUndefined();

  // The times come from perf script's header lines (-F time,ip,sym,dso), as sample times.
  const text = [" 1.500000: ", "\t    7f0000005010 [unknown] ([unknown])", "", " 2.500000: ", "\t    7f0000005010 [unknown] ([unknown])", ""].join("\n");
  const samples = parsePerfScript(text);
  expect(samples.map((sample) => sample.time)).toEqual([1_500_000_000n, 2_500_000_000n]);
  expect(Object.fromEntries(analyse(samples, names).userUnder)).toEqual({ sizeCaps: 1, onDatagram: 1 });
});
