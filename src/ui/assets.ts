import { createHash } from "node:crypto";
import htmx from "htmx.org/dist/htmx.min.js" with { type: "text" };
import sse from "htmx-ext-sse/dist/sse.min.js" with { type: "text" };
import uplot from "uplot/dist/uPlot.iife.min.js" with { type: "text" };
import uplotCss from "uplot/dist/uPlot.min.css" with { type: "text" };
import appCss from "./assets/ui.css" with { type: "text" };
import appJs from "./assets/ui.client.js" with { type: "text" };

export interface Asset {
  /** /ui/assets/<content hash>/<name>: a new build gets new URLs, so they can be cached for a year. */
  path: string;
  type: string;
  body: string;
}

const JS = "text/javascript; charset=utf-8";
const CSS = "text/css; charset=utf-8";

function asset(name: string, type: string, body: string): Asset {
  const hash = createHash("sha256").update(body).digest("hex").slice(0, 16);
  return { path: `/ui/assets/${hash}/${name}`, type, body };
}

/** Every file the pages load, embedded in the binary: no CDN, no file beside the binary. */
export const assets = {
  htmx: asset("htmx.min.js", JS, htmx),
  sse: asset("sse.min.js", JS, sse),
  uplot: asset("uPlot.iife.min.js", JS, uplot),
  uplotCss: asset("uPlot.min.css", CSS, uplotCss),
  css: asset("ui.css", CSS, appCss),
  js: asset("ui.client.js", JS, appJs),
} as const;

export const assetsByPath: ReadonlyMap<string, Asset> = new Map(Object.values(assets).map((a) => [a.path, a]));
