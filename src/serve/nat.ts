import { execFileSync } from "node:child_process";
import { err, ok, type Result } from "../errors.ts";

/**
 * Masquerading for the client pool, with nftables: one table of gw's own per TUN device, so that
 * stopping gw removes exactly what it added and nothing of the operator's rules is touched.
 */
export interface NatPlan {
  /** The pool, e.g. 10.10.0.0/24. */
  pool: string;
  tunName: string;
  /** Masquerade only out of this interface; absent: out of every interface but the TUN. */
  outInterface?: string;
}

/** Runs `nft -f -` with a script; throws with nft's message on failure. */
export type RunNft = (script: string) => void;

export const runNft: RunNft = (script) => {
  execFileSync("nft", ["-f", "-"], { input: script, stdio: ["pipe", "ignore", "pipe"], timeout: 10_000 });
};

export const natTableName = (tunName: string) => `gw_nat_${tunName.replace(/[^A-Za-z0-9_]/g, "_")}`;

export function natScript(plan: NatPlan): string {
  const table = natTableName(plan.tunName);
  const out = plan.outInterface ? `oifname ${JSON.stringify(plan.outInterface)}` : `oifname != ${JSON.stringify(plan.tunName)}`;
  // "add" then "delete" then "add": a table left by a crashed run is replaced, a fresh one created.
  return [
    `add table ip ${table}`,
    `delete table ip ${table}`,
    `table ip ${table} {`,
    `  chain postrouting {`,
    `    type nat hook postrouting priority srcnat; policy accept;`,
    `    ip saddr ${plan.pool} ${out} masquerade`,
    `  }`,
    `}`,
    "",
  ].join("\n");
}

export interface ActiveNat {
  table: string;
  remove(): Result<void>;
}

export function enableNat(plan: NatPlan, run: RunNft = runNft): Result<ActiveNat> {
  const table = natTableName(plan.tunName);
  try {
    run(natScript(plan));
  } catch (e) {
    return err(
      "nat_failed",
      `cannot set up masquerading with nft (${nftMessage(e)}): install nftables (apt-get install nftables) and run gw serve with CAP_NET_ADMIN, or turn nat off and add the return route to ${plan.pool} on your router`,
    );
  }
  return ok({
    table,
    remove() {
      try {
        run(`delete table ip ${table}\n`);
        return ok(undefined);
      } catch (e) {
        return err("nat_failed", `cannot remove nft table ip ${table} (${nftMessage(e)}): remove it with nft delete table ip ${table}`);
      }
    },
  });
}

function nftMessage(e: unknown): string {
  const stderr = (e as { stderr?: Buffer }).stderr?.toString().trim();
  if (stderr) return stderr.split("\n")[0]!;
  const code = (e as NodeJS.ErrnoException).code;
  return code === "ENOENT" ? "nft is not installed" : (e as Error).message;
}
