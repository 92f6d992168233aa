import type { CommandDef } from "citty";
import { command, type OptionDefs, type Options } from "./command.ts";
import type { View } from "./reply.ts";

const JSON_OUTPUT = "JSON output";

/** One API request: what most management commands are. */
export interface ApiRequest {
  method: "POST" | "PATCH" | "PUT" | "DELETE";
  path: string;
  body?: unknown;
}

interface ReadSpec<A extends OptionDefs, T> {
  name: string;
  description: string;
  options: A;
  /** The --json description, when it says more than "JSON output". */
  json?: string;
  /** The resource to GET (a usage error thrown here stops the command before any connection). */
  path(options: Options<A>): string;
  /** How a person sees it: a table or a record. */
  view(data: T): View;
}

/** A command that reads one resource: its JSON with --json, else a table or a record. */
export function apiRead<const A extends OptionDefs, T>(spec: ReadSpec<A, T>): CommandDef {
  return command({
    name: spec.name,
    description: spec.description,
    reach: "api",
    options: spec.options,
    json: spec.json ?? JSON_OUTPUT,
    async run({ options, gw }) {
      const data = await gw.call<T>("GET", spec.path(options));
      return { data, view: spec.view(data) };
    },
  });
}

interface ChangeSpec<A extends OptionDefs, T> {
  name: string;
  description: string;
  options: A;
  /** The change to make (checks its input first: a usage error here reaches no server). */
  request(options: Options<A>): ApiRequest | Promise<ApiRequest>;
  /** What was done, for the person at the terminal (stderr). */
  done(options: Options<A>, result: T): string;
}

/** A command that makes one change through the API and says what it did. */
export function apiChange<const A extends OptionDefs, T = unknown>(spec: ChangeSpec<A, T>): CommandDef {
  return command({
    name: spec.name,
    description: spec.description,
    reach: "api",
    options: spec.options,
    async run({ options, gw }) {
      const { method, path, body } = await spec.request(options);
      const result = await gw.call<T>(method, path, body);
      return { notes: [spec.done(options, result)] };
    },
  });
}
