/**
 * `struct epoll_event` for the reader's epoll set: `events` (u32, native byte order) comes first in
 * every layout. The rest differs (packed to 12 bytes on x86-64, 16 with padding on aarch64), so the
 * buffer is 16 bytes, `data` stays 0 and the reader waits for one event at a time: which fd fired is
 * never read from it (an error or hang-up can only be the TUN's; the wake eventfd has neither).
 * A wait that must know which of its descriptors woke it tags each (taggedEpollEvent) and reads the
 * tags back by the ABI's layout (readyTags).
 * Word 0 of the Uint32Array is `events`; each buffer has its own ArrayBuffer, so a pointer taken to
 * it once stays valid.
 */
export const EPOLL_EVENT_WORDS = 4;

/** One epoll_event with these events, for epoll_ctl (made once, passed on every call). */
export function epollEvent(events: number): Uint32Array {
  const event = new Uint32Array(new ArrayBuffer(EPOLL_EVENT_WORDS * 4));
  event[0] = events;
  return event;
}

/**
 * Where `data` sits in struct epoll_event, and how long one is in the array epoll_wait fills: only
 * x86-64 packs it (12 bytes, data at 4); every other Linux ABI aligns data to 8 (16 bytes).
 */
export const EPOLL_EVENT_LAYOUT: { readonly bytes: number; readonly dataAt: number } =
  process.arch === "x64" ? { bytes: 12, dataAt: 4 } : { bytes: 16, dataAt: 8 };
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** One epoll_event with these events and `tag` as its data (the low 32 bits), for epoll_ctl. */
export function taggedEpollEvent(events: number, tag: number): Uint32Array {
  const event = epollEvent(events);
  retagEpollEvent(new DataView(event.buffer), events, tag);
  return event;
}

/** Rewrites an epoll_event made by epollEvent (through `view`, a DataView of its buffer) with new events and tag: one event reused for many calls. */
export function retagEpollEvent(view: DataView, events: number, tag: number): void {
  view.setUint32(0, events, littleEndian);
  view.setUint32(EPOLL_EVENT_LAYOUT.dataAt + (littleEndian ? 0 : 4), tag >>> 0, littleEndian);
  view.setUint32(EPOLL_EVENT_LAYOUT.dataAt + (littleEndian ? 4 : 0), 0, littleEndian);
}

/** Room for `count` events from epoll_wait: the bytes to pass, and a view to read the tags with (made once: a wait allocates nothing). */
export function readyEvents(count: number): { bytes: Uint8Array; view: DataView } {
  const bytes = new Uint8Array(new ArrayBuffer(count * EPOLL_EVENT_LAYOUT.bytes));
  return { bytes, view: new DataView(bytes.buffer) };
}

/** The tags of the first `count` events epoll_wait wrote, or-ed together (tags are bits). */
export function readyTags(ready: { view: DataView }, count: number): number {
  let tags = 0;
  for (let i = 0; i < count; i++) tags |= readyTagAt(ready, i);
  return tags;
}

/** The tag of event `i` of those epoll_wait wrote (a wait whose members carry ids, not bits). */
export function readyTagAt(ready: { view: DataView }, i: number): number {
  return ready.view.getUint32(i * EPOLL_EVENT_LAYOUT.bytes + EPOLL_EVENT_LAYOUT.dataAt + (littleEndian ? 0 : 4), littleEndian);
}
