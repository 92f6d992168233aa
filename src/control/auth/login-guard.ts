/** A source that failed too often, refused until `until`. */
export interface Ban {
  /** "ip:203.0.113.7" or "user:alice@203.0.113.7". */
  key: string;
  ip: string;
  user?: string;
  failures: number;
  since: number;
  until: number;
}

export interface LoginGuardOptions {
  /** Failed logins from one address, within the window, before that address is banned. */
  maxFailuresPerIp: number;
  /** Failed logins for one user name from one address before that pair is banned. */
  maxFailuresPerUser: number;
  windowSeconds: number;
  banSeconds: number;
  now(): number;
  onBan?(ban: Ban): void;
}


interface Counter {
  failures: number;
  windowStart: number;
}

/** Bounded: a flood of new source addresses cannot grow memory without limit. */
const MAX_TRACKED = 100_000;

/**
 * Brute-force protection (the spec: "authentication attempts SHOULD be rate limited"). Failures
 * count per source address and per user name *from that address*, so guessing a user's password
 * from one place never locks that user out elsewhere: successful logins from other addresses
 * are unaffected.
 */
export class LoginGuard {
  private readonly counters = new Map<string, Counter>();
  private readonly bans = new Map<string, Ban>();

  constructor(private readonly o: LoginGuardOptions) {}

  /** The ban that applies to this request, if any. */
  check(ip: string, user?: string): { message: string; retryAfterSeconds: number } | undefined {
    const now = this.o.now();
    for (const key of keys(ip, user)) {
      const ban = this.bans.get(key);
      if (!ban) continue;
      if (ban.until <= now) {
        this.bans.delete(key);
        continue;
      }
      const retryAfterSeconds = Math.ceil((ban.until - now) / 1000);
      const who = ban.user ? `user ${ban.user} from ${ip}` : `address ${ip}`;
      return { message: `Too many failed logins for ${who}: try again in ${retryAfterSeconds} s.`, retryAfterSeconds };
    }
    return undefined;
  }

  failure(ip: string, user?: string): void {
    const now = this.o.now();
    const [ipKey, userKey] = keys(ip, user);
    this.count(ipKey!, ip, undefined, this.o.maxFailuresPerIp, now);
    if (userKey) this.count(userKey, ip, user, this.o.maxFailuresPerUser, now);
  }

  /** A good login clears that user's failures from that address (not the address's own). */
  success(ip: string, user: string): void {
    this.counters.delete(userKeyOf(ip, user));
  }

  list(): Ban[] {
    const now = this.o.now();
    return [...this.bans.values()].filter((b) => b.until > now);
  }

  /** Lifts the bans matching an address or user name (all when absent); returns how many. */
  clear(target?: string): number {
    let n = 0;
    for (const [key, ban] of this.bans) {
      if (target === undefined || ban.ip === target || ban.user === target || key === target) {
        this.bans.delete(key);
        this.counters.delete(key);
        n++;
      }
    }
    return n;
  }

  private count(key: string, ip: string, user: string | undefined, limit: number, now: number): void {
    let c = this.counters.get(key);
    if (!c || now - c.windowStart > this.o.windowSeconds * 1000) {
      c = { failures: 0, windowStart: now };
      if (this.counters.size >= MAX_TRACKED) this.counters.delete(this.counters.keys().next().value!);
      this.counters.set(key, c);
    }
    c.failures++;
    if (c.failures >= limit && !this.bans.has(key)) {
      const ban: Ban = { key, ip, user, failures: c.failures, since: now, until: now + this.o.banSeconds * 1000 };
      if (this.bans.size >= MAX_TRACKED) this.bans.delete(this.bans.keys().next().value!);
      this.bans.set(key, ban);
      this.counters.delete(key);
      this.o.onBan?.(ban);
    }
  }
}

function keys(ip: string, user: string | undefined): string[] {
  return user ? [`ip:${ip}`, userKeyOf(ip, user)] : [`ip:${ip}`];
}

function userKeyOf(ip: string, user: string): string {
  return `user:${user}@${ip}`;
}
