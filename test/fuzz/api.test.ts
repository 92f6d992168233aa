/** Properties of the management API's JSON bodies, every route with a body (issue 8). */
import { apiTarget } from "./targets/api.ts";
import { fuzzTests } from "./run-target.ts";

fuzzTests(apiTarget);
