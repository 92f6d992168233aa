/** Properties of the login documents: XML reader/writer, the auth POST body, cookies (issue 8). */
import { authRequestTarget, xmlTarget } from "./targets/xml-auth.ts";
import { fuzzTests } from "./run-target.ts";

fuzzTests(xmlTarget);
fuzzTests(authRequestTarget);
