/**
 * A descriptor the main thread's own wait for datagrams (Bun on Linux, runtime/bun/udp-main-wait.ts)
 * also sleeps on and reads itself: the TUN device, whose reader thread otherwise takes each packet
 * and hands it over, waking two threads in turn for a reply that reaches the TUN while the main
 * thread sleeps (a LAN server's answer). The wait takes the descriptor before it sleeps and keeps
 * it through quiet turns; after a busy turn, or when the wait stops, the descriptor's own reader
 * has it again, so a flood keeps both threads reading.
 */
export interface HeldDescriptor {
  readonly fd: number;
  /**
   * Before a sleep: takes the descriptor from its own reader. False when it cannot now (that reader
   * is reading it, or what it read still waits to be delivered); the wait then steps aside.
   */
  hold(): boolean;
  /** After a sleep it ended, while held: reads what the descriptor has now and delivers it; how many packets. */
  readHeld(): number;
  /** After a busy turn's own work (a microtask queued at its end), or when the wait stops: gives the descriptor back. */
  letGo(): void;
}
