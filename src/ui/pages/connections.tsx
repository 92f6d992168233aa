/** @jsxImportSource hono/jsx */
import type { ConnectionView } from "../../control/connections.ts";
import { totalDrops, type ConnectionRate, type ConnectionSort, type SortKey } from "../connection-rates.ts";
import { formatBits, formatBytes, formatRate, formatTime } from "../format.ts";
import { ActionButton, Page } from "../layout.tsx";
import type { UiSession } from "../ui-sessions.ts";
import { Notices } from "./notices.tsx";

/** A case-insensitive substring of user, group, VPN address or client address. */
export function matchesFilter(c: ConnectionView, q: string): boolean {
  if (!q) return true;
  const needle = q.toLowerCase();
  return [c.user, c.group, c.address ?? "", c.clientAddress ?? ""].some((field) => field.toLowerCase().includes(needle));
}

const COLUMNS: [SortKey, string, boolean][] = [
  ["user", "User", false],
  ["group", "Group", false],
  ["address", "VPN address", false],
  ["client", "Client address", false],
  ["channel", "Channel and cipher", false],
  ["since", "Since", false],
  ["in", "From client", true],
  ["out", "To client", true],
  ["rate", "Rate in / out (limit up / down)", true],
  ["drops", "Dropped by policy", true],
];

/** The session's effective limits (the policy's, lowered by a quota's throttle), when it has any. */
function limits(c: ConnectionView): string {
  if (c.rateUp === null && c.rateDown === null) return "";
  return ` (limit ${c.rateUp === null ? "none" : formatBits(c.rateUp)} / ${c.rateDown === null ? "none" : formatBits(c.rateDown)})`;
}

/** "0", or the total and each reason: "5: policy_denied 3, rate_limited_up 2". */
function drops(c: ConnectionView): string {
  const reasons = Object.entries(c.drops).filter(([, n]) => n > 0);
  const total = totalDrops(c);
  return reasons.length ? `${total}: ${reasons.map(([reason, n]) => `${reason} ${n}`).join(", ")}` : "0";
}

export function ConnectionRows({ session, connections, rates, userLinks = true }: { session: UiSession; connections: ConnectionView[]; rates?: ReadonlyMap<string, ConnectionRate>; userLinks?: boolean }) {
  const canChange = session.principal.role === "admin";
  if (connections.length === 0) {
    return (
      <tr>
        <td colspan={COLUMNS.length + (canChange ? 1 : 0)} class="muted">
          No live sessions.
        </td>
      </tr>
    );
  }
  return (
    <>
      {connections.map((c) => {
        const rate = rates?.get(c.id);
        return (
          <tr data-session={c.id}>
            <td>{userLinks ? <a href={`/ui/users/${encodeURIComponent(c.user)}`}>{c.user}</a> : c.user}</td>
            <td>{c.group}</td>
            <td>{c.address ?? "—"}</td>
            <td>{c.clientAddress ? `${c.clientAddress}:${c.clientPort}` : "—"}</td>
            <td>{c.channel ? `${c.channel.toUpperCase()}${c.cipher ? ` · ${c.cipher}` : ""}` : "disconnected"}</td>
            <td>{formatTime(c.connectedSince ?? c.loginAt)}</td>
            <td class="num">{formatBytes(c.bytesIn)}</td>
            <td class="num">{formatBytes(c.bytesOut)}</td>
            <td class="num rate">{`${rate ? `${formatRate(rate.in)} / ${formatRate(rate.out)}` : "—"}${limits(c)}`}</td>
            <td class="num drops-cell">{drops(c)}</td>
            {canChange && (
              <td>
                <ActionButton session={session} action={`/ui/connections/${encodeURIComponent(c.id)}/kill`} label="Disconnect" danger confirm={`Disconnect ${c.user} (${c.address ?? c.id})?`} />
              </td>
            )}
          </tr>
        );
      })}
    </>
  );
}

/** The table head: each column a link that sorts by it (again: the other way). */
export function ConnectionHead({ session, sort, link }: { session: UiSession; sort?: ConnectionSort; link?: (key: SortKey, descending: boolean) => string }) {
  return (
    <thead>
      <tr>
        {COLUMNS.map(([key, label, num]) => {
          const active = sort?.key === key;
          return (
            <th scope="col" class={num ? "num" : undefined} aria-sort={active ? (sort!.descending ? "descending" : "ascending") : undefined}>
              {link ? <a href={link(key, active ? !sort!.descending : num || key === "since")}>{`${label}${active ? (sort!.descending ? " ↓" : " ↑") : ""}`}</a> : label}
            </th>
          );
        })}
        {session.principal.role === "admin" && <th scope="col">Action</th>}
      </tr>
    </thead>
  );
}

export function ConnectionsPage(props: { session: UiSession; connections: ConnectionView[]; q: string; sort: ConnectionSort; notice?: string }) {
  const { sort } = props;
  const params = (o: Record<string, string>) => new URLSearchParams({ q: props.q, sort: sort.key, dir: sort.descending ? "desc" : "asc", ...o }).toString();
  const live = `/ui/live?view=connections&${params({})}`;
  return (
    <Page title="Connections" session={props.session} current="/ui/connections">
      <Notices notice={props.notice} />
      <form class="toolbar" method="get" action="/ui/connections" role="search">
        <label>
          Filter (user, group or address)
          <input name="q" value={props.q} type="search" />
        </label>
        <input type="hidden" name="sort" value={sort.key} />
        <input type="hidden" name="dir" value={sort.descending ? "desc" : "asc"} />
        <button type="submit" class="secondary">
          Filter
        </button>
      </form>
      <section class="panel" hx-ext="sse" sse-connect={live}>
        <table id="connections">
          <caption class="muted">Updated every second; rates from the byte counters between updates</caption>
          <ConnectionHead session={props.session} sort={sort} link={(key, descending) => `/ui/connections?${params({ sort: key, dir: descending ? "desc" : "asc" })}`} />
          <tbody id="connection-rows" sse-swap="connections">
            <ConnectionRows session={props.session} connections={props.connections} />
          </tbody>
        </table>
      </section>
    </Page>
  );
}
