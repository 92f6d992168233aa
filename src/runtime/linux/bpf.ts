import { err, ok, type Result } from "../../errors.ts";
import type { BpfLibc } from "./bpf-libc.ts";
import { errnoName } from "./tun-errors.ts";

/**
 * The bpf(2) commands the TUN steering needs, each building its union bpf_attr member
 * (linux/bpf.h) in a zeroed block: the kernel requires every byte past the fields it knows to
 * be zero, and zero-fills what a shorter block leaves out.
 */

const BPF_MAP_CREATE = 0;
const BPF_MAP_UPDATE_ELEM = 2;
const BPF_MAP_DELETE_ELEM = 3;
const BPF_PROG_LOAD = 5;

export const BPF_MAP_TYPE_HASH = 1;
export const BPF_MAP_TYPE_ARRAY = 2;
export const BPF_PROG_TYPE_SOCKET_FILTER = 1;
/** BPF_MAP_UPDATE_ELEM flags: create or replace. */
const BPF_ANY = 0;
const OBJ_NAME_LEN = 16;
/** Enough for the verifier's report on a small program; a longer one is cut (ENOSPC), still readable. */
const LOG_BYTES = 64 * 1024;

/**
 * A failed bpf(2) call as `steering_unavailable` (setting up: map, program, attach) or
 * `steering_update_failed` (a placement), with the errno and, for a load, the verifier's log.
 */
export function bpfError<T = never>(libc: BpfLibc, code: "steering_unavailable" | "steering_update_failed", step: string, log?: string): Result<T> {
  const e = libc.errno();
  const hint = log
    ? "the kernel's verifier rejected the steering program (a gw bug, or a kernel older than the program needs): report it with the log below; until then run a single worker"
    : code === "steering_update_failed"
      ? "the steering map refused the entry; packets for this address go where its old entry said (queue 0 if none) until it is placed again"
      : e === 1 || e === 13
        ? "run as root or grant CAP_BPF and CAP_NET_ADMIN (and check the sysctl kernel.unprivileged_bpf_disabled)"
        : "the kernel needs CONFIG_BPF_SYSCALL and TUN steering (Linux 4.16 or later); without it run a single worker";
  const why = log ? `; the verifier said:\n${log}` : "";
  return err(code, `cannot ${step}: ${libc.strerror(e)} (${errnoName(e)}); ${hint}${why}`, { errno: e, step, log });
}

const attr = (bytes: number) => {
  const block = new Uint8Array(bytes);
  return { block, view: new DataView(block.buffer) };
};

function setName(block: Uint8Array, offset: number, name: string): void {
  new TextEncoder().encodeInto(name.slice(0, OBJ_NAME_LEN - 1), block.subarray(offset, offset + OBJ_NAME_LEN - 1));
}

export interface MapSpec {
  type: number;
  keyBytes: number;
  valueBytes: number;
  maxEntries: number;
  /** Shown by bpftool; at most 15 characters of [A-Za-z0-9_.]. */
  name: string;
}

/** BPF_MAP_CREATE: the new map's fd. */
export function createMap(libc: BpfLibc, spec: MapSpec): Result<number> {
  const { block, view } = attr(48);
  view.setUint32(0, spec.type, true);
  view.setUint32(4, spec.keyBytes, true);
  view.setUint32(8, spec.valueBytes, true);
  view.setUint32(12, spec.maxEntries, true);
  setName(block, 28, spec.name); // after map_flags, inner_map_fd, numa_node
  const fd = libc.bpf(BPF_MAP_CREATE, block, []);
  return fd >= 0 ? ok(fd) : bpfError(libc, "steering_unavailable", `create BPF map ${spec.name} (${spec.maxEntries} entries)`);
}

/** BPF_PROG_LOAD with the verifier's log: the program's fd, or the errno and what the verifier said. */
export function loadProgram(libc: BpfLibc, o: { type: number; insns: Uint8Array; license: string; name: string }): Result<number> {
  const { block, view } = attr(64);
  const license = new TextEncoder().encode(`${o.license}\0`);
  const log = new Uint8Array(LOG_BYTES);
  view.setUint32(0, o.type, true);
  view.setUint32(4, o.insns.byteLength / 8, true);
  view.setUint32(24, 1, true); // log_level 1: the verifier explains a rejection
  view.setUint32(28, log.byteLength, true);
  setName(block, 48, o.name);
  const fd = libc.bpf(BPF_PROG_LOAD, block, [{ offset: 8, buffer: o.insns }, { offset: 16, buffer: license }, { offset: 32, buffer: log }]);
  if (fd >= 0) return ok(fd);
  const end = log.indexOf(0);
  const text = new TextDecoder().decode(log.subarray(0, end < 0 ? log.length : end)).trim();
  return bpfError(libc, "steering_unavailable", `load BPF program ${o.name}`, text);
}

/** BPF_MAP_UPDATE_ELEM (create or replace). */
export function updateElement(libc: BpfLibc, mapFd: number, key: Uint8Array, value: Uint8Array): Result<void> {
  const { view, block } = attr(32);
  view.setUint32(0, mapFd, true);
  view.setBigUint64(24, BigInt(BPF_ANY), true);
  return libc.bpf(BPF_MAP_UPDATE_ELEM, block, [{ offset: 8, buffer: key }, { offset: 16, buffer: value }]) === 0
    ? ok(undefined)
    : bpfError(libc, "steering_update_failed", "update the steering map");
}

/** BPF_MAP_DELETE_ELEM; ENOENT (no such entry) is a failure here too (details.errno 2), the caller decides. */
export function deleteElement(libc: BpfLibc, mapFd: number, key: Uint8Array): Result<void> {
  const { view, block } = attr(16);
  view.setUint32(0, mapFd, true);
  return libc.bpf(BPF_MAP_DELETE_ELEM, block, [{ offset: 8, buffer: key }]) === 0 ? ok(undefined) : bpfError(libc, "steering_update_failed", "delete from the steering map");
}
