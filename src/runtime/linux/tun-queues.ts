import { err, ok, type Result } from "../../errors.ts";
import type { TunOptions } from "../tun.ts";
import { attachTun, checkTunOptions, configureTun } from "./tun-config.ts";
import { configureTunIpv6 } from "./tun-config6.ts";
import type { TunLibc } from "./tun-libc.ts";
import { ensureNonBlocking } from "./fd-flags.ts";
import { tunError } from "./tun-errors.ts";

/**
 * A multi-queue TUN device (IFF_MULTI_QUEUE), for several worker processes that each read and
 * write their own queue: the main process creates and configures the device and opens every
 * queue, then hands each worker its queue's fd. Queue i is the i-th fd (the kernel numbers
 * queues in attach order). The fds are non-blocking and close-on-exec, as openTun's; the
 * device goes away when the last queue's fd is closed.
 */
export interface TunQueues {
  name: string;
  /** Every read and write on every queue carries a virtio-net header (IFF_VNET_HDR). */
  vnetHeader: boolean;
  fds: number[];
}

/** MAX_TAP_QUEUES in tun.c. */
export const MAX_TUN_QUEUES = 256;

/** Creates the device with `count` queues and configures it as openTun does (addresses, MTU, up). */
export function openTunQueues(libc: TunLibc, options: TunOptions, count: number): Result<TunQueues> {
  if (!Number.isInteger(count) || count < 1 || count > MAX_TUN_QUEUES) {
    return err("tun_config_failed", `a TUN device has 1 to ${MAX_TUN_QUEUES} queues, not ${count}`);
  }
  const settings = checkTunOptions(options);
  if (!settings.ok) return settings;
  const first = attachTun(libc, settings.value.name, { vnetHeader: options.offload ?? true, multiQueue: true });
  if (!first.ok) return first;
  const { name, vnetHeader } = first.value;
  const fds = [first.value.fd];
  const fail = <T>(r: Result<T> & { ok: false }): Result<TunQueues> => {
    for (const fd of fds) libc.close(fd);
    return r;
  };
  const configured = configureTun(libc, { ...settings.value, name });
  if (!configured.ok) return fail(configured);
  const ipv6 = settings.value.ipv6;
  if (ipv6) {
    const added = configureTunIpv6(libc, name, ipv6);
    if (!added.ok) return fail(added);
  }
  while (fds.length < count) {
    const queue = attachTunQueue(libc, name, vnetHeader);
    if (!queue.ok) return fail(queue);
    fds.push(queue.value);
  }
  return ok({ name, vnetHeader, fds });
}

/** Attaches one more queue to an existing multi-queue device; it gets the next index. */
export function attachTunQueue(libc: TunLibc, name: string, vnetHeader: boolean): Result<number> {
  const attached = attachTun(libc, name, { vnetHeader, multiQueue: true });
  return attached.ok ? ok(attached.value.fd) : attached;
}

/**
 * Makes a queue fd non-blocking again; true when it was not. A process given a queue fd calls
 * it before reading, and the giver after handing it over: the flag belongs to the open file,
 * which both share, and Deno's node:child_process spawn clears it on an fd it passes to the
 * child (in the parent too; Bun's keeps it). A blocking read would stall the reader for good.
 */
export function setNonBlocking(libc: TunLibc, fd: number): Result<boolean> {
  const set = ensureNonBlocking(libc, fd);
  if ("changed" in set) return ok(set.changed);
  return tunError(`make TUN queue fd ${fd} non-blocking`, set.errno, `fd ${fd}`, (e) => libc.strerror(e));
}
