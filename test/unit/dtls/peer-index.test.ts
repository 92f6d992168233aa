import { describe, expect, test } from "bun:test";
import { PeerIndex } from "../../../src/dtls/peer-index.ts";

interface TestPeer {
  address: string;
  port: number;
  session: string;
}

const peer = (address: string, port: number, session: string): TestPeer => ({ address, port, session });
const index = () => new PeerIndex<TestPeer, string>((p) => p.session);

describe("PeerIndex", () => {
  test("finds a lone peer by address and port only", () => {
    const peers = index();
    const a = peer("203.0.113.5", 4000, "s1");
    peers.add(a);
    expect(peers.get("203.0.113.5", 4000)).toBe(a);
    expect(peers.get("203.0.113.5", 4001)).toBeUndefined();
    expect(peers.get("203.0.113.6", 4000)).toBeUndefined();
    expect(peers.size).toBe(1);
  });

  test("several ports at one address, then back to one", () => {
    const peers = index();
    const a = peer("203.0.113.5", 4000, "s1");
    const b = peer("203.0.113.5", 4001, "s2");
    const c = peer("203.0.113.5", 4002, "s3");
    for (const p of [a, b, c]) peers.add(p);
    expect(peers.get("203.0.113.5", 4001)).toBe(b);
    expect(peers.atAddress("203.0.113.5")).toEqual([a, b, c]);
    peers.remove(b);
    peers.remove(a);
    expect(peers.get("203.0.113.5", 4002)).toBe(c);
    expect(peers.get("203.0.113.5", 4000)).toBeUndefined();
    expect(peers.atAddress("203.0.113.5")).toEqual([c]);
    peers.remove(c);
    expect(peers.atAddress("203.0.113.5")).toEqual([]);
    expect(peers.size).toBe(0);
  });

  test("a session's peers, in the order they came, as a copy the caller may change the index under", () => {
    const peers = index();
    const a = peer("203.0.113.5", 4000, "s1");
    const b = peer("203.0.113.9", 5000, "s1");
    const c = peer("203.0.113.9", 5001, "s1");
    const other = peer("203.0.113.7", 4000, "s2");
    for (const p of [a, b, other, c]) peers.add(p);
    const ofS1 = peers.ofSession("s1");
    expect(ofS1).toEqual([a, b, c]);
    for (const p of ofS1) peers.remove(p);
    expect(peers.ofSession("s1")).toEqual([]);
    expect(peers.ofSession("s2")).toEqual([other]);
    expect(peers.all()).toEqual([other]);
    expect(peers.size).toBe(1);
  });

  test("removing the middle one of a session's three leaves the other two", () => {
    const peers = index();
    const [a, b, c] = [4000, 4001, 4002].map((port) => peer("203.0.113.5", port, "s1"));
    for (const p of [a!, b!, c!]) peers.add(p);
    peers.remove(b);
    expect(peers.ofSession("s1")).toEqual([a!, c!]);
    peers.remove(a);
    expect(peers.ofSession("s1")).toEqual([c!]);
  });

  test("removing a peer twice, or one never added, changes nothing", () => {
    const peers = index();
    const a = peer("203.0.113.5", 4000, "s1");
    const b = peer("203.0.113.5", 4001, "s1");
    peers.add(a);
    peers.add(b);
    peers.remove(a);
    peers.remove(a);
    peers.remove(peer("203.0.113.5", 4001, "s1")); // same address and port, another peer
    peers.remove(undefined);
    expect(peers.size).toBe(1);
    expect(peers.get("203.0.113.5", 4001)).toBe(b);
    expect(peers.ofSession("s1")).toEqual([b]);
  });

  test("moving a peer to a new port re-files it at that port", () => {
    const peers = index();
    const a = peer("203.0.113.5", 4000, "s1");
    const b = peer("203.0.113.5", 4001, "s2");
    peers.add(a);
    peers.add(b);
    peers.movePort(a, 4500);
    expect(a.port).toBe(4500);
    expect(peers.get("203.0.113.5", 4000)).toBeUndefined();
    expect(peers.get("203.0.113.5", 4500)).toBe(a);
    expect(peers.get("203.0.113.5", 4001)).toBe(b);
    peers.movePort(b, 4600);
    peers.remove(a);
    expect(peers.get("203.0.113.5", 4600)).toBe(b);
    expect(peers.atAddress("203.0.113.5")).toEqual([b]);
    expect(peers.ofSession("s1")).toEqual([]);
    expect(peers.size).toBe(1);
  });
});
