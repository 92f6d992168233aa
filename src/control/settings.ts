import { z } from "zod";
import { gatewaySettingsSchema, type GatewaySettings } from "../config/gateway-config.ts";
import { LIVE_SETTING_KEYS, needsRestart } from "../config/settings-table.ts";
import { err, ok, type Result } from "../errors.ts";
import type { Store } from "../store/store.ts";
import type { Actor, AuditLog } from "./audit.ts";
import type { EventBus } from "./events.ts";
import { issueDetails, validationError } from "./zod-errors.ts";

/** The store's meta key holding the settings document (JSON). */
export const SETTINGS_META_KEY = "gateway_settings";

/** What the running gateway tells the settings service (absent when the CLI works on the data directory alone). */
export interface RunningSettings {
  /** What this run uses: the stored document, then `gw serve` flags on top. */
  current(): GatewaySettings;
  /** Names of the settings given as `gw serve` flags in this run: they win over the document until a restart without them. */
  readonly flagged: readonly string[];
  /** Applies the live settings (LIVE_SETTING_KEYS: the table's rows that apply to new tunnels or logins). */
  applyLive(settings: GatewaySettings): void;
}

export const settingsChangeSchema = z.object({
  config: gatewaySettingsSchema,
  /** Changed settings that take effect at the next start only. */
  restartRequired: z.array(z.string()),
  /** Changed settings that `gw serve` flags override in this run. */
  overriddenByFlags: z.array(z.string()),
});
export type SettingsChange = z.infer<typeof settingsChangeSchema>;

export const settingsCheckSchema = z.object({
  valid: z.boolean(),
  problems: z.array(z.object({ path: z.string(), message: z.string() })),
  restartRequired: z.array(z.string()),
  overriddenByFlags: z.array(z.string()),
});
export type SettingsCheck = z.infer<typeof settingsCheckSchema>;

/**
 * The gateway settings as one validated document. PUT replaces it as a whole; a bad document
 * changes nothing. Flags of `gw serve` override the stored document for that run.
 */
export class SettingsService {
  constructor(
    private readonly store: Store,
    private readonly audit: AuditLog,
    private readonly events: EventBus,
    private readonly running?: RunningSettings,
  ) {}

  /** The stored document with defaults filled in (the embedded defaults when none is stored). */
  get(): GatewaySettings {
    return readStoredSettings(this.store);
  }

  check(input: unknown): SettingsCheck {
    const parsed = gatewaySettingsSchema.safeParse(input);
    if (!parsed.success) {
      const problems = issueDetails(parsed.error.issues);
      return { valid: false, problems, restartRequired: [], overriddenByFlags: [] };
    }
    return { valid: true, problems: [], ...this.effects(parsed.data) };
  }

  /** For callers holding unchecked input (tests, fuzzing): validates once, then writes. The API validates at its edge and calls write. */
  replace(input: unknown, actor: Actor): Result<SettingsChange> {
    const parsed = gatewaySettingsSchema.safeParse(input);
    return parsed.success ? ok(this.write(parsed.data, actor)) : validationError(parsed.error, "configuration");
  }

  /** Stores a document its caller validated (gatewaySettingsSchema) and applies the live settings. */
  write(next: GatewaySettings, actor: Actor): SettingsChange {
    const effects = this.effects(next);
    this.store.transaction(() => {
      const before = readStoredSettings(this.store);
      this.store.setMeta(SETTINGS_META_KEY, JSON.stringify(next));
      if (JSON.stringify(before) !== JSON.stringify(next)) this.audit.record(actor, "config.update", "config", before, next);
    });
    if (this.running) {
      const live = { ...this.running.current() };
      for (const key of LIVE_SETTING_KEYS) if (!this.running.flagged.includes(key)) (live as Record<string, unknown>)[key] = next[key];
      this.running.applyLive(live);
    }
    this.events.emit({ type: "config.updated", actor, restartRequired: effects.restartRequired });
    return { config: next, ...effects };
  }

  private effects(next: GatewaySettings): { restartRequired: string[]; overriddenByFlags: string[] } {
    if (!this.running) return { restartRequired: [], overriddenByFlags: [] };
    const current = this.running.current() as Record<string, unknown>;
    const changed = Object.keys({ ...current, ...next }).filter((k) => current[k] !== (next as Record<string, unknown>)[k]);
    const overriddenByFlags = changed.filter((k) => this.running!.flagged.includes(k));
    const restartRequired = changed.filter((k) => !overriddenByFlags.includes(k) && needsRestart(k));
    return { restartRequired, overriddenByFlags };
  }
}

/** The stored settings document, defaults filled in; an unreadable one falls back to the defaults. */
export function readStoredSettings(store: Store): GatewaySettings {
  const text = store.getMeta(SETTINGS_META_KEY);
  if (text !== undefined) {
    try {
      const parsed = gatewaySettingsSchema.safeParse(JSON.parse(text));
      if (parsed.success) return parsed.data;
    } catch {}
  }
  return gatewaySettingsSchema.parse({});
}

/** Only the settings an operator stored (no defaults), for combining with `gw serve` flags. */
export function storedSettingsDocument(store: Store): Result<Partial<GatewaySettings>> {
  const text = store.getMeta(SETTINGS_META_KEY);
  if (text === undefined) return ok({});
  try {
    return ok(JSON.parse(text) as Partial<GatewaySettings>);
  } catch {
    return err("store_corrupt", "the stored configuration is unreadable: fix it with 'gw config set'");
  }
}
