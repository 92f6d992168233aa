import type { Result } from "../errors.ts";
import type { Log } from "../log/log-line.ts";
import type { HeldDescriptor } from "./held-descriptor.ts";

/** What the gateway needs to create its TUN device (one shared device for all sessions). */
export interface TunOptions {
  /** Interface name, at most 15 bytes, e.g. "gw0". */
  name: string;
  /** The gateway's own address on the device, IPv4 dotted, e.g. "10.10.0.1". */
  address: string;
  /** Prefix length of the pool, e.g. 24: the kernel then routes the whole pool to the device. */
  prefixLength: number;
  mtu: number;
  /** The gateway's own IPv6 address on the device and the IPv6 pool's prefix length (--pool6); absent: IPv4 only. */
  ipv6?: { address: string; prefixLength: number };
  /** Where the device reports trouble after it is open (the packet reader stopping); default stderr. */
  log?: Log;
  /** Called once when the device stops delivering packets for good (see TunLost). */
  onLost?: TunLost;
  /**
   * Write a batch's consecutive TCP segments of one stream as one GSO packet (Linux: IFF_VNET_HDR,
   * user-space GRO), so the kernel forwards them once instead of per segment. Default on.
   */
  offload?: boolean;
}

/**
 * The device's packet reader stopped and will not start again: the interface was deleted (`ip
 * link del`: every read and write then fails with EBADFD) or a read failed. Nothing reaches the
 * sessions any more; `why` says what the reader saw. The gateway stops so that its service
 * manager starts it afresh (a new device), rather than serve logins into a dead tunnel.
 */
export type TunLost = (why: string) => void;

/**
 * A layer-3 TUN device (IFF_TUN | IFF_NO_PI): each read or write is one raw IP packet.
 * Reads happen off the main thread and arrive in batches; writes are synchronous.
 */
export interface TunDevice {
  readonly name: string;
  readonly mtu: number;
  /**
   * True when writeMany merges a batch's TCP segments (offload): then writing many packets at
   * once is worth a short wait, and the DTLS path collects a receive burst's packets first.
   */
  readonly coalesces: boolean;
  /**
   * Delivers packets read from the device. The array and its Uint8Array views are only valid during the
   * call (they point into a reused batch buffer): copy what must outlive it.
   */
  onPackets(handler: (packets: readonly Uint8Array[]) => void): void;
  /** Writes one IP packet to the kernel. False when the kernel refused it (caller counts it). */
  write(packet: Uint8Array): boolean;
  /**
   * Writes a batch of IP packets in one call (as wireguard-go's tun.Write(bufs)); returns how many
   * the kernel took, the rest are the caller's drops. A TUN device takes one packet per write(2),
   * so on Linux a batch is a loop of writes, except that with offload a stream's consecutive TCP
   * segments go as one GSO write.
   */
  writeMany(packets: readonly Uint8Array[]): number;
  /** True while packets read from the device wait to be delivered (absent: never known). */
  hasWaitingPackets?(): boolean;
  /** The device as the main thread's own wait for datagrams may hold and read it (UdpSocket.alsoWaitFor); absent where it cannot. */
  readonly heldByMainWait?: HeldDescriptor;
  /** Stops the reader and closes the device (the kernel removes the interface). Idempotent. */
  close(): void;
}

/**
 * Error codes openTun returns:
 * - tun_unavailable: /dev/net/tun missing (load the tun module / give the container the device)
 * - tun_permission: CAP_NET_ADMIN missing (run as root or grant the capability)
 * - tun_busy: the interface name is taken by a device we cannot attach to
 * - tun_config_failed: address, MTU or link-up failed (message says which)
 */
export type OpenTun = (options: TunOptions) => Promise<Result<TunDevice>>;

/** A queue of the workers' multi-queue TUN device (WorkerKernel.tun), handed to a worker process. */
export interface AdoptTunOptions {
  /** The queue's descriptor in this process (a worker's handed fd: 3, 4, ...). */
  fd: number;
  /** The device's name and MTU, as the main process configured them (for the TunDevice and logs). */
  name: string;
  mtu: number;
  /** Whether the device carries a virtio-net header on every packet (WorkerKernel.tun.vnetHeader): it must match. */
  vnetHeader: boolean;
  log?: Log;
  /** Called once when the queue stops delivering packets for good (see TunLost). */
  onLost?: TunLost;
}

/**
 * A TunDevice over a queue fd the main process created and configured: no ioctl, no config;
 * close() closes only this fd (the device lives on in the main process). On failure the fd is
 * left open, the caller's. Error code: tun_config_failed.
 */
export type AdoptTun = (options: AdoptTunOptions) => Promise<Result<TunDevice>>;
