import { ok } from "../../errors.ts";
import { logLine } from "../../log/log-line.ts";
import type { OpenTun, TunDevice } from "../tun.ts";
import { attachTun, checkTunOptions, configureTun } from "./tun-config.ts";
import { configureTunIpv6 } from "./tun-config6.ts";
import type { TunLibc } from "./tun-libc.ts";
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
  const { fd, name, vnetHeader } = attached.value;
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
  const headerBytes = vnetHeader ? VNET_HDR_BYTES : 0;
  const reader = await startReader(libc, workerUrl(), fd, name, headerBytes, (why) => log(logLine`tun ${name}: packet reader stopped: ${why}`));
  if (!reader.ok) {
    libc.close(fd);
    return reader;
  }

  if (options.offload !== false && !vnetHeader) log(logLine`tun ${name}: the kernel refused IFF_VNET_HDR; TCP segments are written one by one`);

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
    mtu: settings.value.mtu,
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
    close() {
      if (!open) return;
      open = false;
      reader.value.stop();
      libc.close(fd);
    },
  };
  return ok(device);
};
