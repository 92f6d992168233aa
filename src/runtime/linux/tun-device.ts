import { err, ok, type Result } from "../../errors.ts";
import { type Log, logLine } from "../../log/log-line.ts";
import type { AdoptTun, OpenTun, TunDevice, TunLost } from "../tun.ts";
import { attachTun, checkTunOptions, configureTun } from "./tun-config.ts";
import { configureTunIpv6 } from "./tun-config6.ts";
import type { TunLibc } from "./tun-libc.ts";
import { setNonBlocking } from "./tun-queues.ts";
import { startReader } from "./tun-reader.ts";
import { TcpGro } from "./tcp-gro.ts";
import { VNET_HDR_BYTES } from "./virtio-net-hdr.ts";

/**
 * The gateway's TUN device on Linux: created and configured with ioctls on the main thread,
 * read by a worker (the runtime's tun-worker.ts), written synchronously from the main thread,
 * with a virtio-net header on each packet so that a stream's TCP segments are written as one
 * GSO frame (tcp-gro.ts) unless `offload: false`.
 * Each runtime supplies its libc binding and its worker file.
 */
export const linuxOpenTun = (loadLibc: () => TunLibc, workerUrl: () => URL): OpenTun => async (options) => {
  const settings = checkTunOptions(options);
  if (!settings.ok) return settings;
  const libc = loadLibc();

  const attached = attachTun(libc, settings.value.name, { vnetHeader: options.offload ?? true });
  if (!attached.ok) return attached;
  const { fd, name, vnetHeader, readOffload } = attached.value;
  // Closing the fd makes the kernel delete the interface, so every failure below just closes it.
  const configured = configureTun(libc, { ...settings.value, name });
  // IPv6 once the link is up: an interface taken down loses its IPv6 addresses, so up comes first.
  const ipv6 = settings.value.ipv6;
  if (configured.ok && ipv6) {
    const added = configureTunIpv6(libc, name, ipv6);
    if (!added.ok) {
      libc.close(fd);
      return added;
    }
  }
  if (!configured.ok) {
    libc.close(fd);
    return configured;
  }
  const log = options.log ?? ((message) => console.error(message));
  const device = await tunDeviceOverFd(libc, workerUrl(), { fd, name, mtu: settings.value.mtu, vnetHeader, log, onLost: options.onLost });
  if (!device.ok) {
    libc.close(fd);
    return device;
  }
  if (options.offload !== false && !vnetHeader) log(logLine`tun ${name}: the kernel refused IFF_VNET_HDR; TCP segments are written one by one`);
  else if (vnetHeader && !readOffload) log(logLine`tun ${name}: the kernel refused TUNSETOFFLOAD; packets are read one by one`);
  return device;
};

/**
 * A worker process's TUN device: one queue of the device the main process made (WorkerKernel),
 * handed over as a descriptor. The flag O_NONBLOCK is set first, as a spawn may have cleared it
 * (tun-queues.ts setNonBlocking); nothing else is asked of the kernel.
 */
export const linuxAdoptTun = (loadLibc: () => TunLibc, workerUrl: () => URL): AdoptTun => async (options) => {
  const { fd, name, mtu, vnetHeader } = options;
  if (!Number.isInteger(fd) || fd < 0) return err("tun_config_failed", `cannot adopt TUN queue fd ${fd}: not a descriptor (the main process hands it at 3, 4, ...)`);
  const libc = loadLibc();
  const nonBlocking = setNonBlocking(libc, fd);
  if (!nonBlocking.ok) return nonBlocking;
  return tunDeviceOverFd(libc, workerUrl(), { fd, name, mtu, vnetHeader, log: options.log ?? ((message) => console.error(message)), onLost: options.onLost });
};

interface OpenFd {
  /** A non-blocking TUN fd, configured; the device's close() closes it. */
  fd: number;
  name: string;
  mtu: number;
  /** Every read and write carries a virtio-net header (IFF_VNET_HDR): TCP runs go as GSO frames. */
  vnetHeader: boolean;
  log: Log;
  onLost: TunLost | undefined;
}

/** The TunDevice over an open TUN fd: its reader worker and ring, writes on this thread. On failure the fd stays open. */
async function tunDeviceOverFd(libc: TunLibc, workerUrl: URL, { fd, name, mtu, vnetHeader, log, onLost }: OpenFd): Promise<Result<TunDevice>> {
  const headerBytes = vnetHeader ? VNET_HDR_BYTES : 0;
  let lost = false;
  const reader = await startReader(libc, workerUrl, fd, name, headerBytes, (why) => {
    log(logLine`tun ${name}: packet reader stopped: ${why}`);
    if (lost) return;
    lost = true;
    onLost?.(why);
  });
  if (!reader.ok) return reader;

  let open = true;
  const writeRaw = (data: Uint8Array): boolean => {
    try {
      return libc.write(fd, data) >= 0;
    } catch {
      return false; // e.g. a detached buffer; the caller counts it as a drop
    }
  };
  // With the virtio-net header every write is a frame; runs of one TCP stream go as one GSO frame.
  const gro = vnetHeader ? new TcpGro() : null;
  // A write takes the device from the reader worker (claim) and, once the caller's work is done,
  // reads any reply on this thread and gives the device back (TunReader.readNow).
  let readPending = false;
  const readNowTask = () => {
    readPending = false;
    if (open) reader.value.readNow();
  };
  const readSoon = () => {
    if (readPending) return;
    readPending = true;
    queueMicrotask(readNowTask);
  };
  const device: TunDevice = {
    name,
    mtu,
    coalesces: gro !== null,
    onPackets: (handler) => reader.value.setHandler(handler),
    write(packet) {
      if (!open) return false;
      reader.value.claim();
      readSoon();
      return gro ? gro.writePlain(packet, writeRaw) : writeRaw(packet);
    },
    writeMany(packets) {
      if (!open) return 0;
      reader.value.claim();
      readSoon();
      if (gro) return gro.write(packets, writeRaw);
      let written = 0;
      for (const packet of packets) if (writeRaw(packet)) written++;
      return written;
    },
    hasWaitingPackets: () => open && reader.value.hasUndelivered(),
    heldByMainWait: {
      fd,
      hold: () => open && reader.value.hold(),
      readHeld: () => (open ? reader.value.readNow() : 0),
      letGo: () => reader.value.letGo(),
    },
    close() {
      if (!open) return;
      open = false;
      reader.value.stop();
      libc.close(fd);
    },
  };
  return ok(device);
}
