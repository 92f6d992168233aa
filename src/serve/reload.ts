import type { SecureContextOptions } from "node:tls";
import type { ClientCertTrust } from "../pki/client-cert-trust.ts";
import type { GatewayConfig, GatewaySettings } from "../config/gateway-config.ts";
import { settingsOf } from "../config/gateway-config.ts";
import { LIVE_SETTING_KEYS } from "../config/settings-table.ts";
import type { ReloadReport } from "../control/lifecycle.ts";
import { err, ok, type Result } from "../errors.ts";
import { logLine, type Log } from "../log/log-line.ts";
import type { ClientCertificateCheck } from "../front/client-cert-check.ts";
import { createClientCertificateCheck } from "../front/client-cert-check.ts";
import { tlsContextOptions } from "../front/tls-listener.ts";
import { loadClientCertFiles } from "./client-cert-setup.ts";
import { obtainServerCertificate } from "./server-certificate.ts";

export interface ReloadTarget {
  dataDir: string;
  /** The running configuration; live settings are written into it. */
  config: GatewayConfig;
  /** Reads the settings again: the stored document with this run's flags on top. */
  reread(): Result<GatewayConfig>;
  /**
   * The tunnel port's TLS: its listener, or the workers' (gateway.ts TunnelPort), which also take
   * the client CA and CRL read (they check certificates themselves).
   */
  server: { setSecureContext(options: SecureContextOptions, clientTrust?: ClientCertTrust): void };
  /** The client-certificate check in use, swapped when the CA or CRL is reloaded. */
  clientCheck: { current: ClientCertificateCheck | undefined };
  pin(): string;
  setPin(pin: string): void;
  now(): number;
  log: Log;
}

/**
 * SIGHUP and `gw reload`: certificate, key, client CA, CRL and settings are read again; all of
 * it is loaded before anything is swapped, so a bad file changes nothing. Sessions stay up.
 */
export function reloadGateway(t: ReloadTarget): Result<ReloadReport> {
  const next = t.reread();
  if (!next.ok) return failed(next.error.message, t.log);
  const cert = obtainServerCertificate(t.dataDir, next.value.certFile, next.value.keyFile);
  if (!cert.ok) return failed(cert.error.message, t.log);
  const trust = loadClientCertFiles(next.value.clientCaFile, next.value.crlFile);
  if (!trust.ok) return failed(trust.error.message, t.log);

  const before = settingsOf(t.config);
  const after = settingsOf(next.value);
  const changed = (Object.keys({ ...before, ...after }) as (keyof GatewaySettings)[]).filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
  const live = new Set<string>(LIVE_SETTING_KEYS);
  // A CA where there was none (or none where there was one) changes what the handshake asks for.
  const caAppearsOrGoes = (t.clientCheck.current === undefined) !== (trust.value === undefined);
  const restartRequired = changed.filter((k) => !live.has(k) && !RELOADED_FILES.has(k)).concat(caAppearsOrGoes ? ["clientCaFile"] : []);
  const applied = changed.filter((k) => live.has(k));

  try {
    const keptTrust = caAppearsOrGoes ? undefined : trust.value;
    t.server.setSecureContext(tlsContextOptions(cert.value.certPem, cert.value.keyPem, keptTrust?.anchors.map((a) => a.toString())), keptTrust);
  } catch (e) {
    return failed(`the TLS context could not be built: ${(e as Error).message}`, t.log);
  }
  if (trust.value && !caAppearsOrGoes) t.clientCheck.current = createClientCertificateCheck(trust.value, t.now, t.log);
  for (const k of applied) (t.config as Record<string, unknown>)[k] = next.value[k];
  const changedPin = cert.value.pin !== t.pin();
  t.setPin(cert.value.pin);

  const report: ReloadReport = {
    certificate: { pin: cert.value.pin, changed: changedPin },
    clientCa: trust.value && !caAppearsOrGoes ? "reloaded" : "none",
    applied,
    restartRequired: [...new Set(restartRequired)],
  };
  t.log(logLine`reload: certificate=${cert.value.pin} new=${changedPin} clientCa=${report.clientCa} applied=${applied.join(",") || "-"} restartRequired=${report.restartRequired.join(",") || "-"}`);
  if (changedPin) t.log(logLine`reload: new TLS connections get the new certificate; the management API keeps its certificate until the next start`);
  return ok(report);
}

/** File settings whose files are read again by a reload itself (their paths changing still counts). */
const RELOADED_FILES = new Set<string>(["certFile", "keyFile", "clientCaFile", "crlFile"]);

function failed(message: string, log: Log): Result<ReloadReport> {
  log(logLine`reload failed, nothing changed: ${message}`);
  return err("reload_failed", `reload failed, nothing changed: ${message}`);
}
