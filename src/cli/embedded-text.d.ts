/** Files embedded in the binary as text (`import x from "...service" with { type: "text" }`). */
declare module "*.service" {
  const text: string;
  export default text;
}
