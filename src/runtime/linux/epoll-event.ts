/**
 * `struct epoll_event` for the reader's epoll set: `events` (u32) comes first in every layout.
 * The rest differs (packed to 12 bytes on x86-64, 16 with padding on aarch64), so the buffer is
 * 16 bytes, `data` stays 0 and the reader waits for one event at a time: which fd fired is never
 * read from it (an error or hang-up can only be the TUN's; the wake eventfd has neither).
 */
export const EPOLL_EVENT_BYTES = 16;

/** A buffer holding one epoll_event with these events, for epoll_ctl. */
export function epollEvent(events: number): Uint8Array {
  const event = new Uint8Array(EPOLL_EVENT_BYTES);
  new DataView(event.buffer).setUint32(0, events, true);
  return event;
}

/** The events of the one epoll_event epoll_wait wrote into `event`. */
export function eventsOf(event: Uint8Array): number {
  return new DataView(event.buffer, event.byteOffset, 4).getUint32(0, true);
}
