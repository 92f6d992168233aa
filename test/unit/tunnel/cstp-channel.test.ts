import { describe, expect, test } from "bun:test";
import { DropCounters } from "../../../src/net/drop-counters.ts";
import { TrafficCounters } from "../../../src/net/traffic-counters.ts";
import { CstpChannel, type ChannelEnd, type ChannelSocket } from "../../../src/tunnel/cstp-channel.ts";
import { CstpType, encodeFrame } from "../../../src/tunnel/cstp-codec.ts";
import { FramePool } from "../../../src/tunnel/frame-pool.ts";

/**
 * A socket that records each write() as one record and completes writes when told to. Like a
 * real socket it takes the bytes a frame holds when written: the writer may reuse the memory once
 * the callback ran.
 */
class FakeSocket implements ChannelSocket {
  writes: Uint8Array[] = [];
  /** The memory each write came from. */
  blocks: ArrayBufferLike[] = [];
  private callbacks: (() => void)[] = [];
  ended = false;
  destroyed = false;
  write(data: Uint8Array, cb: () => void): boolean {
    this.writes.push(new Uint8Array(data)); // a copy (a Buffer's slice() is a view)
    this.blocks.push(data.buffer);
    this.callbacks.push(cb);
    return true;
  }
  flush(): void {
    while (this.callbacks.length) this.callbacks.shift()!();
  }
  end(): void {
    this.ended = true;
  }
  destroy(): void {
    this.destroyed = true;
  }
}

function channel(options: { dialect?: "stf" | "compact"; maxQueuedFrames?: number; frames?: FramePool } = {}) {
  let now = 0;
  const socket = new FakeSocket();
  const packets: Uint8Array[] = [];
  const ends: ChannelEnd[] = [];
  const drops = new DropCounters();
  const ch = new CstpChannel(socket, {
    dialect: options.dialect,
    dpdSeconds: 30,
    maxQueuedFrames: options.maxQueuedFrames ?? 256,
    frames: options.frames ?? new FramePool(2048, 64),
    drops,
    traffic: new TrafficCounters(),
    now: () => now,
    onPacket: (p) => packets.push(p.slice()),
    onEnd: (e) => ends.push(e),
  });
  return { ch, socket, packets, ends, drops, setNow: (t: number) => (now = t) };
}

const ipPacket = (n: number) => {
  const p = new Uint8Array(20 + n);
  p[0] = 0x45;
  return p;
};

describe("CstpChannel", () => {
  test("a written frame's memory carries the next frame (no buffer per packet), and every record holds its own packet", () => {
    const frames = new FramePool(2048, 64);
    const { ch, socket } = channel({ dialect: "stf", frames });
    const sent: Uint8Array[] = [];
    for (let i = 0; i < 20; i++) {
      const packet = ipPacket(100 + i * 50);
      packet.fill(i + 1, 20);
      sent.push(packet);
      ch.sendPacket(packet);
      socket.flush();
    }
    expect(socket.writes.map((w) => w.subarray(8))).toEqual(sent);
    expect(new Set(socket.blocks).size).toBe(1);
    expect(socket.blocks[0]!.byteLength).toBe(2048);
    expect(frames.idle).toBe(1);
  });

  test("frames still queued behind a write each have their own memory", () => {
    const frames = new FramePool(2048, 64);
    const { ch, socket } = channel({ dialect: "stf", frames });
    const sent = [1, 2, 3, 4].map((n) => ipPacket(40).fill(n, 20));
    for (const p of sent) ch.sendPacket(p);
    socket.flush(); // each callback starts the next write
    socket.flush();
    socket.flush();
    socket.flush();
    expect(socket.writes.map((w) => w.subarray(8))).toEqual(sent);
    expect(new Set(socket.blocks).size).toBe(4);
    expect(frames.idle).toBe(4);
  });

  test("each frame is its own write, and the next waits for the previous one (docs/protocol.md §6.3)", () => {
    const { ch, socket } = channel({ dialect: "stf" });
    ch.sendPacket(ipPacket(10));
    ch.sendPacket(ipPacket(20));
    expect(socket.writes.length).toBe(1);
    socket.flush();
    expect(socket.writes.length).toBe(2);
    expect([...socket.writes[1]!.subarray(0, 8)]).toEqual([0x53, 0x54, 0x46, 0x01, 0x00, 40, 0x00, 0x00]);
  });

  test("DPD request answered, keepalive ignored, data delivered, in both dialects", () => {
    for (const dialect of ["stf", "compact"] as const) {
      const { ch, socket, packets } = channel();
      ch.receive(encodeFrame(dialect, CstpType.DPD_REQ, new Uint8Array(0)));
      ch.receive(encodeFrame(dialect, CstpType.KEEPALIVE, new Uint8Array(0)));
      ch.receive(encodeFrame(dialect, CstpType.DATA, ipPacket(8)));
      expect(packets.length).toBe(1);
      expect(socket.writes.map((w) => [...w])).toEqual([[...encodeFrame(dialect, CstpType.DPD_RESP, new Uint8Array(0))]]);
    }
  });

  test("before the dialect is known, downstream packets wait, then go out in the client's dialect", () => {
    const { ch, socket } = channel();
    ch.sendPacket(ipPacket(4));
    expect(socket.writes.length).toBe(0);
    ch.receive(encodeFrame("compact", CstpType.KEEPALIVE, new Uint8Array(0)));
    expect(socket.writes.length).toBe(1);
    expect(socket.writes[0]![0]).toBe(0x02); // compact data
  });

  test("BYE with b0 is a logout; an empty DISCONNECT only a lost connection", () => {
    const a = channel({ dialect: "stf" });
    a.ch.receive(encodeFrame("stf", CstpType.DISCONNECT, new Uint8Array([0xb0, 0x41])));
    expect(a.ends).toEqual([{ kind: "logout" }]);
    const b = channel({ dialect: "stf" });
    b.ch.receive(encodeFrame("stf", CstpType.DISCONNECT, new Uint8Array(0)));
    expect(b.ends[0]?.kind).toBe("lost");
  });

  test("broken frames and unnegotiated compression end the channel, nothing else", () => {
    const a = channel();
    a.ch.receive(new Uint8Array([0x53, 0x54, 0x46, 0x02, 0, 0, 0, 0]));
    expect(a.ends[0]?.kind).toBe("protocol_error");
    expect(a.socket.destroyed).toBe(true);
    const b = channel({ dialect: "stf" });
    b.ch.receive(encodeFrame("stf", CstpType.COMPRESSED, new Uint8Array(4)));
    expect(b.ends[0]?.kind).toBe("protocol_error");
  });

  test("DPD: probe after 2 silent intervals, give up after 3", () => {
    const { ch, socket, ends, setNow } = channel({ dialect: "stf" });
    setNow(59_000);
    ch.tick(59_000);
    expect(socket.writes.length).toBe(0);
    setNow(61_000);
    ch.tick(61_000);
    expect([...socket.writes[0]!]).toEqual([...encodeFrame("stf", CstpType.DPD_REQ, new Uint8Array(0))]);
    ch.tick(91_000);
    expect(ends[0]?.kind).toBe("dead");
  });

  test("a slow client loses packets (counted) instead of growing the queue", () => {
    const { ch, socket, drops } = channel({ dialect: "stf", maxQueuedFrames: 4 });
    for (let i = 0; i < 10; i++) ch.sendPacket(ipPacket(1));
    expect(drops.get("queue_full")).toBe(5); // 1 in flight + 4 queued
    socket.flush();
    expect(socket.writes.length).toBe(5);
  });

  test("a dropped frame's memory goes straight back to the pool", () => {
    const frames = new FramePool(2048, 64);
    const { ch, drops } = channel({ dialect: "stf", maxQueuedFrames: 4, frames });
    for (let i = 0; i < 10; i++) ch.sendPacket(ipPacket(1));
    expect(drops.get("queue_full")).toBe(5);
    // 1 in flight + 4 queued hold a block each; the 5 refused frames shared one.
    expect(frames.blocksMade).toBe(6);
    expect(frames.idle).toBe(1);
  });

  test("terminate sends TERMINATE and closes once it is written", () => {
    const { ch, socket, ends } = channel({ dialect: "stf" });
    ch.terminate();
    expect([...socket.writes[0]!]).toEqual([...encodeFrame("stf", CstpType.TERMINATE, new Uint8Array(0))]);
    expect(socket.ended).toBe(false);
    socket.flush();
    expect(socket.ended).toBe(true);
    expect(ends).toEqual([{ kind: "closed_by_server" }]);
  });

  test("terminate with a reason sends a DISCONNECT carrying it (openconnect prints it), then closes", () => {
    const { ch, socket, ends } = channel({ dialect: "stf" });
    ch.terminate("taken over\n");
    const payload = [0x00, ...new TextEncoder().encode("taken over.")];
    expect([...socket.writes[0]!]).toEqual([...encodeFrame("stf", CstpType.DISCONNECT, new Uint8Array(payload))]);
    socket.flush();
    expect(socket.ended).toBe(true);
    expect(ends).toEqual([{ kind: "closed_by_server" }]);
  });
});
