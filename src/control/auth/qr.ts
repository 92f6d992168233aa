/**
 * QR codes for OTP enrolment (the otpauth:// URI): SVG for the web UI, PNG for the API and
 * downloads, Unicode half blocks for `gw user otp enroll` in a terminal. Encoding is
 * @paulmillr/qr's; rendering is ours so that every form has the same 4-module quiet zone.
 */
import { encodeQR } from "@paulmillr/qr";
import { GwError } from "../../errors.ts";
import { encodeBlackWhitePng } from "./png.ts";

/** ISO/IEC 18004 asks for four light modules around the symbol. */
const QUIET_ZONE = 4;

/**
 * The module matrix (true = dark) with the quiet zone. Error correction "medium" (15%) suits a
 * screen. Throws GwError `qr_too_long` past the QR capacity (about 2300 bytes at this level).
 */
export function qrMatrix(text: string): boolean[][] {
  let modules: boolean[][];
  try {
    modules = encodeQR(text, "raw", { ecc: "medium", border: 0 });
  } catch (cause) {
    throw new GwError("qr_too_long", `The text (${text.length} characters) does not fit in a QR code.`, {
      cause: cause instanceof Error ? cause.message : String(cause),
    });
  }
  const size = modules.length + 2 * QUIET_ZONE;
  const blank = () => new Array<boolean>(size).fill(false);
  return [
    ...Array.from({ length: QUIET_ZONE }, blank),
    ...modules.map((row) => [...new Array(QUIET_ZONE).fill(false), ...row, ...new Array(QUIET_ZONE).fill(false)]),
    ...Array.from({ length: QUIET_ZONE }, blank),
  ];
}

/**
 * An SVG image: a white square and one path of dark modules, `pixelsPerModule` (default 6)
 * as its default display size; it scales cleanly (crispEdges).
 */
export function qrSvg(text: string, { pixelsPerModule = 6 }: { pixelsPerModule?: number } = {}): string {
  const m = qrMatrix(text);
  const size = m.length;
  let path = "";
  m.forEach((row, y) => {
    // One horizontal run per rectangle keeps the path short.
    for (let x = 0; x < size; ) {
      if (!row[x]) {
        x++;
        continue;
      }
      let end = x;
      while (end < size && row[end]) end++;
      path += `M${x} ${y}h${end - x}v1h-${end - x}z`;
      x = end;
    }
  });
  const px = size * pixelsPerModule;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${px}" height="${px}" viewBox="0 0 ${size} ${size}" ` +
    `shape-rendering="crispEdges"><rect width="${size}" height="${size}" fill="#fff"/>` +
    `<path fill="#000" d="${path}"/></svg>`
  );
}

/** A PNG image, `pixelsPerModule` (default 8) pixels per module, black on white. */
export function qrPng(text: string, { pixelsPerModule = 8 }: { pixelsPerModule?: number } = {}): Uint8Array {
  if (!Number.isInteger(pixelsPerModule) || pixelsPerModule < 1) throw new RangeError("pixelsPerModule must be >= 1");
  const rows: boolean[][] = [];
  for (const row of qrMatrix(text)) {
    const wide = row.flatMap((dark) => new Array<boolean>(pixelsPerModule).fill(dark));
    for (let i = 0; i < pixelsPerModule; i++) rows.push(wide);
  }
  return encodeBlackWhitePng(rows);
}

export interface TerminalOptions {
  /**
   * Default true: paint black on bright white with ANSI colours, so the code reads the same on a
   * dark or a light terminal theme. false: plain characters drawn in the terminal's own colour
   * (for files and pagers); then set `darkTerminal` when that colour is light.
   */
  color?: boolean;
  /** Only without colour: the glyphs mark the light modules (light text on a dark background). */
  darkTerminal?: boolean;
}

/** Unicode half blocks: each character is two modules stacked, so the code stays square. */
export function qrTerminal(text: string, { color = true, darkTerminal = false }: TerminalOptions = {}): string {
  const m = qrMatrix(text);
  const inked = (dark: boolean | undefined) => (color || !darkTerminal ? dark === true : dark !== true);
  const lines: string[] = [];
  for (let y = 0; y < m.length; y += 2) {
    let line = "";
    for (let x = 0; x < m.length; x++) {
      // An odd last row pairs with a light row below: the quiet zone continues.
      const top = inked(m[y][x]);
      const bottom = inked(y + 1 < m.length ? m[y + 1][x] : false);
      line += top ? (bottom ? "█" : "▀") : bottom ? "▄" : " ";
    }
    // 30 = black foreground, 107 = bright white background; reset at each line end so a
    // resized or scrolled terminal never smears the colour.
    lines.push(color ? `\x1b[30;107m${line}\x1b[0m` : line);
  }
  return `${lines.join("\n")}\n`;
}
