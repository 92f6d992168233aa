/** Masquerading with the real nft, inside a namespace of the test's own: added, seen, removed. */
import { afterAll, describe, expect, test } from "bun:test";
import { execFileSync, spawnSync } from "node:child_process";
import { enableNat, natTableName } from "../../src/serve/nat.ts";

const hasNft = spawnSync("nft", ["--version"]).status === 0;
const ns = `gwnat${process.pid}`;
const inNs = (args: string[], input?: string) => execFileSync("ip", ["netns", "exec", ns, ...args], { input, encoding: "utf8", stdio: ["pipe", "pipe", "pipe"] });

describe.skipIf(!hasNft || process.getuid?.() !== 0)("nat with nft", () => {
  execFileSync("ip", ["netns", "add", ns]);
  afterAll(() => spawnSync("ip", ["netns", "del", ns]));
  const run = (script: string) => void inNs(["nft", "-f", "-"], script);

  test("adds one table of its own with the pool's masquerade, replaces a leftover, removes it at stop", () => {
    const first = enableNat({ pool: "10.10.0.0/24", tunName: "gw0" }, run);
    expect(first.ok).toBe(true);
    const again = enableNat({ pool: "10.20.0.0/24", tunName: "gw0", outInterface: "eth9" }, run); // a crashed run's table
    expect(again.ok).toBe(true);
    const listed = inNs(["nft", "list", "table", "ip", natTableName("gw0")]);
    expect(listed).toContain('ip saddr 10.20.0.0/24 oifname "eth9" masquerade');
    expect(listed).not.toContain("10.10.0.0/24");
    if (!again.ok) return;
    expect(again.value.remove().ok).toBe(true);
    expect(inNs(["nft", "list", "tables"])).not.toContain(natTableName("gw0"));
  });

  test("a failure says what to do", () => {
    const r = enableNat({ pool: "10.10.0.0/24", tunName: "gw0" }, () => {
      throw Object.assign(new Error("spawn nft ENOENT"), { code: "ENOENT" });
    });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toContain("nft is not installed");
  });
});
