import { err, ok, type Result } from "../errors.ts";

const units: Record<string, number> = { "": 1, bit: 1, k: 1e3, kbit: 1e3, m: 1e6, mbit: 1e6, g: 1e9, gbit: 1e9 };

/** "20mbit", "500kbit", "1gbit", "1.5mbit" or a plain number: bits per second (decimal units, as tc uses). */
export function parseBitRate(text: string): Result<number> {
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = m ? units[m[2]!.toLowerCase()] : undefined;
  const value = m && unit !== undefined ? Math.round(Number(m[1]) * unit) : NaN;
  if (!(value >= 1000 && value <= 100e9)) {
    return err("invalid_rate", `"${text}" is not a rate between 1kbit and 100gbit: write it as 500kbit, 20mbit or 1gbit`);
  }
  return ok(value);
}

export function formatBitRate(bitsPerSecond: number): string {
  for (const [unit, size] of [["gbit", 1e9], ["mbit", 1e6], ["kbit", 1e3]] as const) {
    if (bitsPerSecond >= size && bitsPerSecond % size === 0) return `${bitsPerSecond / size}${unit}`;
  }
  return `${bitsPerSecond}bit`;
}
