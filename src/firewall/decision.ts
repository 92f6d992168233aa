/**
 * A decision packs the verdict and what caused it into one small integer, so the per-packet
 * lookup returns a number and allocates nothing: cause * 2 + (allowed ? 1 : 0). The cause is
 * the deciding rule's index (>= 0) or one of the negative causes below (always a denial).
 */
export type Decision = number;

/** No allow rule matches (the default deny). */
export const NO_ALLOW = -1;
/** restrictToRoutes: the peer is outside the group's split-include routes. */
export const OUTSIDE_ROUTES = -2;
/** The peer is another client (in the address pool) and no rule naming the pool allows it. */
export const CLIENT_TO_CLIENT = -3;

export const makeDecision = (cause: number, allowed: boolean): Decision => cause * 2 + (allowed ? 1 : 0);
export const isAllowed = (d: Decision): boolean => (d & 1) === 1;
export const causeOf = (d: Decision): number => d >> 1;

/** Protocol slots of the compiled tables; rules with proto "any" are in all four. */
export const TCP = 0;
export const UDP = 1;
export const ICMP = 2;
export const OTHER = 3;

/** IP protocol number -> table slot. */
export function protocolSlot(ipProtocol: number): number {
  return ipProtocol === 6 ? TCP : ipProtocol === 17 ? UDP : ipProtocol === 1 ? ICMP : OTHER;
}
