/** Writes docs/settings.md from the settings table (npm run docs:settings). */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderSettingsReference } from "../../src/config/settings-reference.ts";

const target = join(import.meta.dir, "../../docs/settings.md");
writeFileSync(target, renderSettingsReference());
console.log(`wrote ${target}`);
