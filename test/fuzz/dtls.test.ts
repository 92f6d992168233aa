/** Properties of the DTLS record layer, ClientHello peek and server handshake (issue 8). */
import { dtlsTarget } from "./targets/dtls.ts";
import { fuzzTests } from "./run-target.ts";

fuzzTests(dtlsTarget);
