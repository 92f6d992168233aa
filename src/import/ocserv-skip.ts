/** An ocserv option value gw reads but cannot use: reported as not mapped, with why (not as a problem). */
export class Skip extends Error {}
