/** The process's memory as the runtime sees it. */
export interface MemoryFigures {
  rssBytes: number;
  /** Bytes of the JavaScript heap in use. */
  heapBytes: number;
  /** Live heap objects by type, most numerous first, where the runtime can tell (Bun); else empty. */
  objectTypes: [string, number][];
}

/** A look at the process's memory (operators: SIGUSR2 on gw serve; benchmarks: memory after logout). */
export interface MemoryProbe {
  /** A full, synchronous garbage collection where the runtime allows it: true when one ran. */
  collect(): boolean;
  figures(): MemoryFigures;
}
