import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import unitTemplate from "../../deploy/gw.service" with { type: "text" };
import { GwError } from "../errors.ts";
import { UsageError } from "./args.ts";
import { command } from "./command.ts";
import { group } from "./command-group.ts";

/**
 * The unit with this installation's binary and data directory. The data directory is a systemd
 * state directory (/var/lib/NAME): systemd creates it for the unit's dynamic user.
 */
export function serviceUnit(binary: string, dataDir: string): string {
  if (/\s/.test(binary)) throw new UsageError("the binary's path must not contain spaces (systemd would split it)");
  const state = /^\/var\/lib\/([A-Za-z0-9_.-]+)$/.exec(dataDir)?.[1];
  if (!state) throw new UsageError(`--data-dir must be /var/lib/NAME (a systemd state directory the service's user owns), not ${dataDir}`);
  return unitTemplate.replace(/^ExecStart=.*$/m, `ExecStart=${binary} serve --data-dir ${dataDir}`).replace(/^StateDirectory=.*$/m, `StateDirectory=${state}`);
}

const install = command({
  name: "install",
  description: "Write the systemd unit (/etc/systemd/system/gw.service) for this binary; then systemctl daemon-reload && systemctl enable --now gw",
  reach: "none",
  options: {
    binary: { type: "string", description: "The gw executable ExecStart runs (default: this one, when it is the compiled binary)" },
    "data-dir": { type: "string", description: "Data directory of the service (default /var/lib/gw, a systemd state directory)" },
    root: { type: "string", description: "Write below this directory instead of / (packaging, tests)" },
    force: { type: "boolean", description: "Replace an existing unit file" },
  },
  run({ options: o }) {
    const self = process.execPath;
    const compiled = !/\/(bun|deno|node)$/.test(self);
    const binary = o.binary ?? (compiled ? self : undefined);
    if (!binary) throw new UsageError("gw runs from the sources here: give --binary /path/to/gw (npm run build makes dist/gw)");
    const unitText = serviceUnit(resolve(binary), o["data-dir"] ?? "/var/lib/gw");
    const path = join(o.root ?? "/", "etc/systemd/system/gw.service");
    if (existsSync(path) && !o.force) throw new GwError("unit_exists", `${path} exists: --force replaces it`);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, unitText, { mode: 0o644 });
    return { notes: [`wrote ${path}`, "next: systemctl daemon-reload && systemctl enable --now gw; gw doctor checks the host"] };
  },
});

export const serviceCommand = group("service", "Run gw as a systemd service", [install]);
