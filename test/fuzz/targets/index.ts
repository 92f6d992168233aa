/** Every fuzz target, in the order the script runs them. */
import { apiTarget } from "./api.ts";
import { cstpTarget } from "./cstp.ts";
import { dtlsTarget } from "./dtls.ts";
import { httpHeadTarget, httpReaderTarget } from "./http.ts";
import { settingsTarget } from "./settings.ts";
import type { FuzzTarget } from "./target.ts";
import { authRequestTarget, xmlTarget } from "./xml-auth.ts";

export const allTargets: FuzzTarget[] = [httpHeadTarget, httpReaderTarget, xmlTarget, authRequestTarget, cstpTarget, dtlsTarget, apiTarget, settingsTarget];
