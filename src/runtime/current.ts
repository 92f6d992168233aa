import { loadRuntime } from "./select.ts";

/**
 * The runtime adapters of this process, detected once when the program loads (src/main.ts
 * checks for an unsupported runtime first and ends with one line; anything that imports this
 * module elsewhere under such a runtime fails here with the same message).
 */
const loaded = await loadRuntime();
if (!loaded.ok) throw loaded.error;
export const runtime = loaded.value;
