import { resolve } from "node:path";

export const dataDirArg = {
  "data-dir": {
    type: "string",
    description: "Data directory (default ./gw-data, or $GW_DATA_DIR)",
  },
} as const;

export function dataDirFrom(args: { "data-dir"?: string }): string {
  return resolve(args["data-dir"] ?? process.env.GW_DATA_DIR ?? "./gw-data");
}
