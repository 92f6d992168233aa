import type { PacketSink } from "../net/router.ts";
import type { CstpChannel } from "./cstp-channel.ts";
import type { DtlsChannel } from "../dtls/dtls-channel.ts";

/**
 * The downstream side of one session: packets go over DTLS while it is up and the client uses
 * it, else over CSTP (docs/protocol.md §7.7). Upstream is accepted on both channels at all times.
 * The router keeps pointing at this object across reconnects and channel changes.
 */
export class SessionTunnel implements PacketSink {
  cstp: CstpChannel | undefined;
  dtls: DtlsChannel | undefined;
  /** False after the client sent data over CSTP: it evidently considers DTLS down (ocserv does the same). */
  private useDtls = false;

  constructor(private readonly onChannelChange: (channel: "cstp" | "dtls", cipher: string) => void) {}

  sendPacket(packet: Uint8Array): void {
    if (this.useDtls && this.dtls) this.dtls.sendPacket(packet);
    else this.cstp?.sendPacket(packet);
  }

  /** A new DTLS channel completed its handshake: it replaces the old one (§7.6). */
  attachDtls(channel: DtlsChannel): void {
    const old = this.dtls;
    this.dtls = channel;
    if (old && old !== channel) old.close();
    this.dtlsActive();
  }

  detachDtls(channel: DtlsChannel): void {
    if (this.dtls !== channel) return;
    this.dtls = undefined;
    this.cstpActive();
  }

  /** A new CSTP connection took over: the old DTLS channel is not this client's (or not any more). */
  forgetDtls(): void {
    this.dtls?.close();
    this.dtls = undefined;
    this.cstpActive();
  }

  /** Called for every authenticated DTLS record: the client is using DTLS. */
  dtlsActive(): void {
    if (this.useDtls || !this.dtls) return;
    this.useDtls = true;
    this.onChannelChange("dtls", this.dtls.cipher);
  }

  /** Called for data frames on CSTP. */
  cstpActive(): void {
    if (!this.useDtls) return;
    this.useDtls = false;
    this.onChannelChange("cstp", "");
  }

  get channel(): "cstp" | "dtls" {
    return this.useDtls && this.dtls ? "dtls" : "cstp";
  }

  close(): void {
    this.dtls?.close();
    this.dtls = undefined;
  }
}
