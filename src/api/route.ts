import type { Context } from "hono";
import type { z } from "zod";
import type { ControlPlane } from "../control/control-plane.ts";
import type { Principal } from "../control/tokens.ts";
import type { ApiEnv } from "./api-env.ts";
import type { ErrorCode } from "./errors.ts";
import { reply, type SuccessStatus } from "./reply.ts";

export type Method = "get" | "post" | "put" | "patch" | "delete";
/** Who may call a route: any valid token (`read`) or only an admin token. */
export type Scope = "read" | "admin";

/** `{a}` and `{b}` in "/x/{a}/y/{b}" → "a" | "b". */
type ParamNames<P extends string> = P extends `${string}{${infer Name}}${infer Rest}` ? Name | ParamNames<Rest> : never;
export type PathParams<P extends string> = { [K in ParamNames<P>]: string };

export interface ResponseDoc {
  status: number;
  description: string;
  schema?: z.ZodType;
  contentType?: string;
}

/** What a route says about itself: enough for the hono registration, the scope check and openapi.json. */
export interface RouteDoc<P extends string = string, B extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType> {
  method: Method;
  /** OpenAPI form, under /api/v1: /users/{name} (registered with hono as /users/:name). */
  path: P;
  scope: Scope;
  summary: string;
  /** Validates the JSON body before the handler runs; the handler gets the parsed value. */
  body?: B;
  /** In the validation error message: "invalid <bodyName>: …" (default "body"). */
  bodyName?: string;
  /** The body as openapi.json shows it, where the validator is looser on purpose (a dry run answers problems itself). */
  documentedBody?: z.ZodType;
  query?: Q;
  /** The first is the success answer: its status is the one the handler's value gets. */
  responses: readonly [ResponseDoc & { status: SuccessStatus }, ...ResponseDoc[]];
  /** Error codes beyond the common ones (401, 403, 400 invalid_json/invalid_input, 413, 415). */
  errors?: readonly ErrorCode[];
  /** Served at /<path> as well as under /api/v1 (Prometheus scrapes /metrics). */
  alsoAtRoot?: boolean;
}

export interface HandlerInput<P extends string, B, Q> {
  control: ControlPlane;
  principal: Principal;
  params: PathParams<P>;
  body: B;
  query: Q;
}

/** A handler returns a Result, a plain value or a `withStatus(...)`; `reply` makes the response. */
type Handler<P extends string, B, Q> = (input: HandlerInput<P, B, Q>) => unknown;
/** The escape for the few routes that must write their own response (a stream, a text format). */
type RawHandler<P extends string, B, Q> = (input: HandlerInput<P, B, Q> & { c: Context<ApiEnv> }) => Response | Promise<Response>;

type RouteSpec<P extends string, B extends z.ZodType, Q extends z.ZodType> = RouteDoc<P, B, Q> &
  ({ handler: Handler<P, z.output<B>, z.output<Q>>; raw?: never } | { raw: RawHandler<P, z.output<B>, z.output<Q>>; handler?: never });

/** A row of the route table: its description, and what answers a request that passed its checks. */
export interface ApiRoute extends RouteDoc {
  respond(c: Context<ApiEnv>): Promise<Response>;
}

/** Absent schemas type the handler's body and query as undefined. */
type Absent = z.ZodType<undefined>;

/**
 * Declares a route. Scope, summary and responses are required by the type, so a route cannot
 * exist without its scope check or its openapi.json entry; params, body and query are typed
 * from the path and the schemas.
 */
export function route<const P extends string, B extends z.ZodType = Absent, Q extends z.ZodType = Absent>(spec: RouteSpec<P, B, Q>): ApiRoute {
  const { handler, raw, ...doc } = spec;
  const success = spec.responses[0].status;
  return {
    ...doc,
    async respond(c) {
      const input: HandlerInput<P, z.output<B>, z.output<Q>> = {
        control: c.var.control,
        principal: c.var.principal,
        params: c.req.param() as PathParams<P>,
        // The registration attached validators from these same schemas (register-routes.ts).
        body: (spec.body ? c.req.valid("json" as never) : undefined) as z.output<B>,
        query: (spec.query ? c.req.valid("query" as never) : undefined) as z.output<Q>,
      };
      if (raw) return raw({ ...input, c });
      return reply(c, await handler!(input), success);
    },
  };
}
