// Files imported as text (`with { type: "text" }`): Bun and esbuild embed their contents.
declare module "htmx.org/dist/htmx.min.js" {
  const text: string;
  export default text;
}
declare module "htmx-ext-sse/dist/sse.min.js" {
  const text: string;
  export default text;
}
declare module "uplot/dist/uPlot.iife.min.js" {
  const text: string;
  export default text;
}
declare module "*.css" {
  const text: string;
  export default text;
}
declare module "*.client.js" {
  const text: string;
  export default text;
}
