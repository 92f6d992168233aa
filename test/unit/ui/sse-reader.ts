/** Reads SSE frames from a streamed response until `until` says stop; a comment line is event "comment". */
export async function readEvents(res: Response, until: (events: { event: string; data: string }[]) => boolean): Promise<{ event: string; data: string }[]> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: { event: string; data: string }[] = [];
  let buffer = "";
  while (!until(events)) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = frame.startsWith(":") ? "comment" : (/^event: (.*)$/m.exec(frame)?.[1] ?? "message");
      const data = [...frame.matchAll(/^data: ?(.*)$/gm)].map((m) => m[1]).join("\n");
      events.push({ event, data });
    }
  }
  await reader.cancel();
  return events;
}
