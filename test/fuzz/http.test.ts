/** Properties of the tunnel port's HTTP head parser and request reader (issue 8). */
import { httpHeadTarget, httpReaderTarget } from "./targets/http.ts";
import { fuzzTests } from "./run-target.ts";

fuzzTests(httpHeadTarget);
fuzzTests(httpReaderTarget);
