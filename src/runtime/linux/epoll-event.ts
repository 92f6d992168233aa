/**
 * `struct epoll_event` for the reader's epoll set: `events` (u32, native byte order) comes first in
 * every layout. The rest differs (packed to 12 bytes on x86-64, 16 with padding on aarch64), so the
 * buffer is 16 bytes, `data` stays 0 and the reader waits for one event at a time: which fd fired is
 * never read from it (an error or hang-up can only be the TUN's; the wake eventfd has neither).
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
