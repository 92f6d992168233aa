/** @jsxImportSource hono/jsx */
import { Hono } from "hono";
import { findAudit } from "./audit-view.ts";
import { AUDIT_PAGE, AuditPage } from "./pages/audit.tsx";
import type { UiEnv } from "./ui-env.ts";

/** The audit log with filters; pages continue from the last id scanned. */
export const auditRoutes = new Hono<UiEnv>().get("/audit", (c) => {
  const after = Math.max(0, Number.parseInt(c.req.query("after") ?? "0", 10) || 0);
  const text = (name: string) => (c.req.query(name) ?? "").trim().slice(0, 128);
  const filter = { actor: text("actor"), action: text("action"), target: text("target") };
  const page = findAudit(c.var.control.audit, filter, after, AUDIT_PAGE);
  return c.html(<AuditPage session={c.var.session} entries={page.entries} after={after} next={page.more ? page.scannedTo : undefined} filter={filter} />);
});
