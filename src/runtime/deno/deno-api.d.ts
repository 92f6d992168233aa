/**
 * The part of Deno's API the Deno adapters (and the bun:test shim) use, for `npm run typecheck`
 * (tsc with Bun's types; Deno's own lib.deno.d.ts is not on npm). Deno itself ignores this file.
 */
declare namespace Deno {
  type NativeType = "i32" | "u32" | "i64" | "u64" | "isize" | "usize" | "buffer" | "pointer" | "void";
  type PointerObject = { readonly __pointer: unique symbol };
  type PointerValue = PointerObject | null;
  type NativeResult<T> = T extends "pointer" ? PointerValue : T extends "i64" | "u64" | "isize" | "usize" ? number | bigint : T extends "void" ? void : number;
  type NativeArg<T> = T extends "buffer" ? ArrayBufferView<ArrayBufferLike> | null : T extends "pointer" ? PointerValue : T extends "i64" | "u64" | "isize" | "usize" ? number | bigint : number;
  interface ForeignFunction {
    readonly parameters: readonly NativeType[];
    readonly result: NativeType;
  }
  type NativeArgs<P extends readonly NativeType[]> = { -readonly [I in keyof P]: NativeArg<P[I]> };
  type Symbols<S extends Record<string, ForeignFunction>> = {
    [K in keyof S]: (...args: NativeArgs<S[K]["parameters"]>) => NativeResult<S[K]["result"]>;
  };
  function dlopen<S extends Record<string, ForeignFunction>>(path: string, symbols: S): { symbols: Symbols<S>; close(): void };

  const UnsafePointer: {
    of(value: ArrayBufferView<ArrayBufferLike>): PointerValue;
    value(pointer: PointerValue): number | bigint;
  };
  class UnsafePointerView {
    constructor(pointer: PointerObject);
    getInt32(offset?: number): number;
    static getCString(pointer: PointerObject, offset?: number): string;
  }

  interface NetAddr {
    transport: "tcp" | "udp";
    hostname: string;
    port: number;
  }
  interface DatagramConn extends AsyncIterable<[Uint8Array, NetAddr]> {
    readonly addr: NetAddr;
    send(data: Uint8Array, to: NetAddr): Promise<number>;
    close(): void;
  }
  function listenDatagram(options: { hostname: string; port: number; transport: "udp" }): DatagramConn;

  interface HttpServer {
    readonly addr: NetAddr;
    shutdown(): Promise<void>;
  }
  function serve(
    options: { hostname: string; port: number; cert: string; key: string; onListen?: (addr: NetAddr) => void },
    handler: (request: Request, info: { remoteAddr: NetAddr }) => Response | Promise<Response>,
  ): HttpServer;

  const version: { deno: string };
  /** `standalone`: this is a `deno compile` executable. */
  const build: { standalone?: boolean; os: string };
  function execPath(): string;
  /** The URL of the entry module. */
  const mainModule: string;
  function memoryUsage(): { rss: number; heapTotal: number; heapUsed: number; external: number };

  function test(
    options: { name: string; ignore?: boolean; sanitizeOps?: boolean; sanitizeResources?: boolean; sanitizeExit?: boolean },
    fn: () => void | Promise<void>,
  ): void;
}
