/** Properties of the CSTP decoder, both dialects (issue 8). */
import { cstpTarget } from "./targets/cstp.ts";
import { fuzzTests } from "./run-target.ts";

fuzzTests(cstpTarget);
