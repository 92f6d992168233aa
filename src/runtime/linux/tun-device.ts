import { ok } from "../../errors.ts";
import { logLine } from "../../log/log-line.ts";
import type { OpenTun, TunDevice } from "../tun.ts";
import { attachTun, checkTunOptions, configureTun } from "./tun-config.ts";
import { configureTunIpv6 } from "./tun-config6.ts";
import type { TunLibc } from "./tun-libc.ts";
import { startReader } from "./tun-reader.ts";

/**
 * The gateway's TUN device on Linux: created and configured with ioctls on the main thread,
 * read by a worker (the runtime's tun-worker.ts), written synchronously from the main thread.
 * Each runtime supplies its libc binding and its worker file.
 */
export const linuxOpenTun = (loadLibc: () => TunLibc, workerUrl: () => URL): OpenTun => async (options) => {
  const settings = checkTunOptions(options);
  if (!settings.ok) return settings;
  const libc = loadLibc();

  const attached = attachTun(libc, settings.value.name);
  if (!attached.ok) return attached;
  const { fd, name } = attached.value;
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
  const reader = await startReader(libc, workerUrl(), fd, name, (why) => log(logLine`tun ${name}: packet reader stopped: ${why}`));
  if (!reader.ok) {
    libc.close(fd);
    return reader;
  }

  let open = true;
  const device: TunDevice = {
    name,
    mtu: settings.value.mtu,
    onPackets: (handler) => reader.value.setHandler(handler),
    write(packet) {
      if (!open) return false;
      try {
        return libc.write(fd, packet) >= 0;
      } catch {
        return false; // e.g. a detached buffer; the caller counts it as a drop
      }
    },
    writeMany(packets) {
      if (!open) return 0;
      let written = 0;
      for (const packet of packets) {
        try {
          if (libc.write(fd, packet) >= 0) written++;
        } catch {
          // e.g. a detached buffer: not written, the caller counts it
        }
      }
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
