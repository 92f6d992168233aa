/**
 * Stops accepting on the tunnel port before the process runs out of descriptors, and starts again
 * when connections end. A listener at EMFILE does not fail: the runtime retries accept(2) at once,
 * forever, at 100 % of a core, and nobody new gets an answer. Closing the listening socket instead
 * makes new clients' connections refused at once (they retry), while every session already up and
 * the management API (its own descriptor reserve) keep working.
 */
export interface AcceptGateOptions {
  /** Open connections on the port (tunnels and logins) at which accepting pauses. */
  maxOpen: number;
  pause(): void;
  /** Starts listening again; a failure is reported back with resumeFailed() (retried with a growing delay). */
  resume(): void;
  /** Told once per pause, with the connections open then. */
  onPause(open: number): void;
}

/** Resume once this share of maxOpen is free again, so the gate does not flap at the edge. */
const RESUME_HEADROOM = 0.05;
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5_000;

export class AcceptGate {
  private open = 0;
  private paused = false;
  private retryMs = RETRY_FIRST_MS;
  private retry: ReturnType<typeof setTimeout> | undefined;
  private readonly resumeBelow: number;

  constructor(private readonly o: AcceptGateOptions) {
    this.resumeBelow = o.maxOpen - Math.max(1, Math.floor(o.maxOpen * RESUME_HEADROOM));
  }

  get isPaused(): boolean {
    return this.paused;
  }

  get openConnections(): number {
    return this.open;
  }

  opened(): void {
    this.open++;
    if (this.paused || this.open < this.o.maxOpen) return;
    this.paused = true;
    this.o.pause();
    this.o.onPause(this.open);
  }

  closed(): void {
    this.open--;
    if (this.paused && this.retry === undefined && this.open <= this.resumeBelow) this.tryResume();
  }

  /** Listening again did not work (e.g. the port is gone for now): try again later, less often each time. */
  resumeFailed(): void {
    this.paused = true;
    if (this.retry !== undefined) return;
    this.retry = setTimeout(() => this.tryResume(), this.retryMs);
    this.retry.unref?.();
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }

  close(): void {
    clearTimeout(this.retry);
    this.retry = undefined;
  }

  private tryResume(): void {
    this.retry = undefined;
    this.paused = false;
    this.o.resume();
  }

  /** A resume that held: the next failure starts again from the shortest delay. */
  resumed(): void {
    this.retryMs = RETRY_FIRST_MS;
  }
}
