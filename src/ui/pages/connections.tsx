/** @jsxImportSource hono/jsx */
import type { ConnectionView } from "../../control/connections.ts";
import { formatBytes, formatTime } from "../format.ts";
import { ActionButton, Page } from "../layout.tsx";
import type { UiSession } from "../ui-sessions.ts";

export interface ConnectionFilterText {
  q: string;
}

/** A case-insensitive substring of user, group, VPN address or client address. */
export function matchesFilter(c: ConnectionView, q: string): boolean {
  if (!q) return true;
  const needle = q.toLowerCase();
  return [c.user, c.group, c.address ?? "", c.clientAddress ?? ""].some((field) => field.toLowerCase().includes(needle));
}

export function ConnectionRows({ session, connections }: { session: UiSession; connections: ConnectionView[] }) {
  const canChange = session.principal.role === "admin";
  if (connections.length === 0) {
    return (
      <tr>
        <td colspan={canChange ? 9 : 8} class="muted">
          No live sessions.
        </td>
      </tr>
    );
  }
  return (
    <>
      {connections.map((c) => (
        <tr>
          <td>{c.user}</td>
          <td>{c.group}</td>
          <td>{c.address ?? "—"}</td>
          <td>{c.clientAddress ? `${c.clientAddress}:${c.clientPort}` : "—"}</td>
          <td>{c.channel ? `${c.channel.toUpperCase()}${c.cipher ? ` · ${c.cipher}` : ""}` : "disconnected"}</td>
          <td>{formatTime(c.connectedSince ?? c.loginAt)}</td>
          <td class="num">{formatBytes(c.bytesIn)}</td>
          <td class="num">{formatBytes(c.bytesOut)}</td>
          {canChange && (
            <td>
              <ActionButton session={session} action={`/ui/connections/${encodeURIComponent(c.id)}/kill`} label="Disconnect" danger confirm={`Disconnect ${c.user} (${c.address ?? c.id})?`} />
            </td>
          )}
        </tr>
      ))}
    </>
  );
}

export function ConnectionsPage(props: { session: UiSession; connections: ConnectionView[]; q: string; notice?: string }) {
  const canChange = props.session.principal.role === "admin";
  const live = `/ui/live?view=connections&q=${encodeURIComponent(props.q)}`;
  return (
    <Page title="Connections" session={props.session} current="/ui/connections">
      {props.notice && <p class="notice" role="status">{props.notice}</p>}
      <form class="toolbar" method="get" action="/ui/connections" role="search">
        <label>
          Filter (user, group or address)
          <input name="q" value={props.q} type="search" />
        </label>
        <button type="submit" class="secondary">
          Filter
        </button>
      </form>
      <section class="panel" hx-ext="sse" sse-connect={live}>
        <table>
          <caption class="muted">Updated every second</caption>
          <thead>
            <tr>
              <th scope="col">User</th>
              <th scope="col">Group</th>
              <th scope="col">VPN address</th>
              <th scope="col">Client address</th>
              <th scope="col">Channel</th>
              <th scope="col">Since</th>
              <th scope="col" class="num">From client</th>
              <th scope="col" class="num">To client</th>
              {canChange && <th scope="col">Action</th>}
            </tr>
          </thead>
          <tbody id="connection-rows" sse-swap="connections">
            <ConnectionRows session={props.session} connections={props.connections} />
          </tbody>
        </table>
      </section>
    </Page>
  );
}
