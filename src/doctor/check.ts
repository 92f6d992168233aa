/** One finding of `gw doctor`: what was checked, what was seen, and the fix when it is not ok. */
export interface Finding {
  check: string;
  status: "ok" | "warn" | "fail";
  detail: string;
  fix?: string;
}
