/**
 * The libc calls the Linux TUN code makes on the main thread, as each runtime's FFI binds them
 * (bun/tun-libc.ts, deno/tun-libc.ts). Pointers never cross this interface: buffers are
 * Uint8Arrays, so the shared code does not care how a runtime spells a pointer.
 */
export interface TunLibc {
  open(path: string, flags: number): number;
  close(fd: number): number;
  /** ioctl(fd, request, arg); ioctl is variadic, a fixed (int, unsigned long, void*) call matches on x86-64 and aarch64. */
  ioctl(fd: number, request: number, arg: Uint8Array): number;
  /** ioctl(fd, request, value) for a request whose argument is a number, not a pointer (TUNSETOFFLOAD); absent where the runtime's binding cannot pass one. */
  ioctlValue?(fd: number, request: number, value: number): number;
  socket(domain: number, type: number, protocol: number): number;
  /** write(2) of the whole buffer; the packet path, so no allocation in the binding. */
  write(fd: number, data: Uint8Array): number;
  /** read(2) into the whole buffer (the main thread's opportunistic read; the worker binds its own). */
  read(fd: number, data: Uint8Array): number;
  eventfd(initval: number, flags: number): number;
  /** epoll_create1(EPOLL_CLOEXEC): the reader's wait set, which the main thread changes while the worker waits in it. */
  epollCreate(): number;
  /** epoll_ctl(epfd, op, fd, event); `event` is made by epoll-event.ts's epollEvent, once. */
  epollCtl(epfd: number, op: number, fd: number, event: Uint32Array): number;
  /** fcntl(fd, command, arg) with an integer argument (F_GETFL, F_SETFL). */
  fcntl(fd: number, command: number, arg: number): number;
  /** The calling thread's errno (thread-local, so a worker reads its own). */
  errno(): number;
  strerror(errno: number): string;
}

/** What the reader worker's loop needs, bound to its fd, wake eventfd and ring by the runtime's worker file. */
export interface ReadLoopLibc {
  /** epoll_wait for one event of the reader's set (tun fd, wake fd); returns epoll_wait's result. */
  wait(timeoutMs: number): number;
  /** The events of the one event the last wait reported. */
  readyEvents(): number;
  /** read(tun fd, ring data + offset, length). */
  readAt(offset: number, length: number): number;
  errno(): number;
  strerror(errno: number): string;
}

/** Linux constants (asm-generic values, the same on x86-64 and aarch64). */
export const O_RDWR = 0o2;
export const O_NONBLOCK = 0o4000;
export const O_CLOEXEC = 0o2000000;
export const AF_INET = 2;
export const AF_INET6 = 10;
export const SOCK_DGRAM = 2;
export const SOCK_CLOEXEC = O_CLOEXEC;
export const F_GETFL = 3;
export const F_SETFL = 4;
export const EFD_NONBLOCK = O_NONBLOCK;
export const EFD_CLOEXEC = O_CLOEXEC;
export const EPOLL_CLOEXEC = O_CLOEXEC;
export const EPOLL_CTL_ADD = 1;
export const EPOLL_CTL_DEL = 2;
export const EPOLL_CTL_MOD = 3;
export const EPOLLIN = 0x1;
export const EPOLLERR = 0x8;
export const EPOLLHUP = 0x10;

export const EINTR = 4;
export const EAGAIN = 11;
