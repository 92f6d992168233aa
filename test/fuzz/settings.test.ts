/** Properties of the settings document and its validation path (issue 8). */
import { settingsTarget } from "./targets/settings.ts";
import { fuzzTests } from "./run-target.ts";

fuzzTests(settingsTarget);
