import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import type { SecureContextOptions, Server, TLSSocket } from "node:tls";
import type { GatewayConfig } from "../config/gateway-config.ts";
import { ensureAdminToken } from "../control/api-tokens.ts";
import { ensureFirstAdmin, type FirstAdmin } from "../control/first-admin.ts";
import { AuthStats } from "../control/auth/auth-stats.ts";
import { RateLimitedLog } from "../control/rate-limited-log.ts";
import { handshakeTimeoutLog } from "../front/handshake-timeout-log.ts";
import { LoginFlow } from "../control/auth/login-flow.ts";
import { BusyRetryAdvice } from "../control/auth/busy-retry-advice.ts";
import { PasswordStep } from "../control/auth/password-step.ts";
import { OtpStep } from "../control/auth/otp-step.ts";
import { otpKeySource } from "../control/auth/otp-key.ts";
import { CertificateStep } from "../control/auth/certificate-step.ts";
import { createClientCertificateCheck } from "../front/client-cert-check.ts";
import { loadClientCertFiles } from "./client-cert-setup.ts";
import { loadSaml, setupSaml } from "./saml-setup.ts";
import { LoginGuard } from "../control/auth/login-guard.ts";
import { SessionRegistry } from "../control/sessions.ts";
import { ControlPlane } from "../control/control-plane.ts";
import { compilePolicy } from "../control/group-policy.ts";
import { err, GwError, ok, type Result } from "../errors.ts";
import { AddressPool } from "../net/address-pool.ts";
import { AddressPool6 } from "../net/address-pool6.ts";
import { formatIpv6, formatIpv6Cidr, parseIpv6Cidr } from "../net/ipv6.ts";
import { DropCounters } from "../net/drop-counters.ts";
import { formatCidr, formatIpv4, parseCidr } from "../net/ipv4.ts";
import { PolicyCompiler } from "../net/policy-compiler.ts";
import { reapplyOnChange, storedPolicySource } from "./live-policy.ts";
import type { ServeHttps } from "../runtime/https-server.ts";
import type { PasswordHasher } from "../runtime/password-hasher.ts";
import type { OpenTun, TunDevice } from "../runtime/tun.ts";
import type { OpenUdp, UdpSocket } from "../runtime/udp.ts";
import type { OpenRawTcp } from "../runtime/raw-tcp.ts";
import type { CreateGcmKey } from "../runtime/gcm.ts";
import type { RaiseOpenFileLimit } from "../runtime/open-files.ts";
import { descriptorBudget } from "./descriptor-budget.ts";
import { createPskExporter } from "../tunnel/psk-exporter.ts";
import { openSqliteStore } from "../store/sqlite-store.ts";
import type { Store } from "../store/store.ts";
import { serveConnection } from "../front/http-connection.ts";
import { handleSamlRequest } from "../front/saml-endpoints.ts";
import type { HttpRequest } from "../front/http-head.ts";
import { grantConnect } from "../tunnel/connect-handler.ts";
import type { TunnelDefaults } from "../tunnel/tunnel-params.ts";
import { listenTls, recordSealing } from "../front/tls-listener.ts";
import type { ClientCertTrust } from "../pki/client-cert-trust.ts";
import { ConnectionAdmission } from "../front/connection-admission.ts";
import { FrontCounters } from "../front/front-counters.ts";
import { FRONT_LIMITS } from "../front/front-limits.ts";
import { DataPlane } from "../dataplane/data-plane.ts";
import { VERSION } from "../version.ts";
import { startManagement, type RunningManagement } from "./management.ts";
import { obtainServerCertificate } from "./server-certificate.ts";
import { formatHostPort, settingsOf } from "../config/gateway-config.ts";
import { logLine, type Log } from "../log/log-line.ts";
import { checkForwarding } from "../doctor/host-checks.ts";
import { checkIpv6Forwarding } from "../doctor/ipv6-forwarding-check.ts";
import { enableNat, type ActiveNat } from "./nat.ts";
import { Drain, type DrainEnd } from "./drain.ts";
import { reloadGateway } from "./reload.ts";
import type { ReloadReport } from "../control/lifecycle.ts";
import { LIVE_SETTING_KEYS } from "../config/settings-table.ts";
import { UsageKeeper } from "../control/usage/usage-keeper.ts";
import type { OpenWorkerKernel, WorkerKernel } from "../runtime/worker-kernel.ts";
import type { WorkerProcesses } from "../runtime/worker-process.ts";
import { SessionWorkers } from "./session-workers.ts";
import { describeProcesses, planWorkers } from "./worker-plan.ts";

/** Removes the masquerading table; a failure is logged with the command that removes it by hand. */
function removeNat(nat: ActiveNat, log: Log): void {
  const removed = nat.remove();
  if (!removed.ok) log(logLine`nat: ${removed.error.message}`);
}

export interface GatewayDeps {
  openTun: OpenTun;
  openUdp: OpenUdp;
  /** The kernel objects of --workers N (steered sockets, multi-queue TUN); absent: workers are refused. */
  openWorkerKernel?: OpenWorkerKernel;
  /** Starting worker processes of this program (--workers N). */
  workerProcesses?: Pick<WorkerProcesses, "spawn" | "selfArgv">;
  /** The cores for `workers` 0 (auto); default: os.availableParallelism. */
  cores?(): number;
  /** Native AES-GCM for DTLS records (the runtime's); absent: node:crypto per record. */
  createGcmKey?: CreateGcmKey;
  /** The TCP socket under a TLS socket, for the records the gateway seals itself (absent: the TLS library writes). */
  openRawTcp?: OpenRawTcp;
  hasher: PasswordHasher;
  /** Lifts the soft open-file limit to the hard one; the limit then bounds the sessions. */
  raiseOpenFileLimit: RaiseOpenFileLimit;
  /** The management API's HTTPS listener. */
  serveHttps: ServeHttps;
  /** Settings given as `gw serve` flags: they override the stored document for this run. */
  flagged?: readonly string[];
  log: Log;
  now?(): number;
  /** nft masquerading for --nat (tests pass a double); default: the nft command. */
  enableNat?: typeof enableNat;
  /** Reads the settings again for a reload (stored document plus this run's flags); absent: reload re-reads files only. */
  reread?(): Result<GatewayConfig>;
  /** A drain has ended (no session left, or its deadline): the caller stops the gateway. */
  onDrained?(how: DrainEnd): void;
  /**
   * The TUN device (or a worker's queue of it) stopped delivering packets for good (TunLost):
   * the caller stops the gateway with a failure status, so that its service manager starts it
   * again with a new device. `why` names the device and what its reader saw.
   */
  onTunLost?(why: string): void;
}

export interface RunningGateway {
  pin: string;
  /** Set on the first start only: the admin API token, to print once. */
  adminToken?: string;
  /** Set when the data directory had no admin account: the web UI's first admin, to print once. */
  firstAdmin?: FirstAdmin;
  address: { host: string; port: number };
  /** The data plane of one process; absent with --workers N, where each worker has its own. */
  plane?: DataPlane;
  /** With --workers N: asks every worker for its memory report (SIGUSR2 passes it on). */
  collectWorkers?(): void;
  control: ControlPlane;
  /** Where the management API listens (TLS with the gateway's certificate). */
  api: { url: string; host: string; port: number; addresses: string[]; described: string };
  /** SIGHUP: certificate, key, CA, CRL and settings again, sessions kept (audited as `actor`). */
  reload(actor: string): Promise<Result<ReloadReport>>;
  stop(): Promise<void>;
}

/** The composition root of `gw serve`: builds every part, in an order that fails early and cleans up. */
export async function startGateway(config: GatewayConfig, deps: GatewayDeps): Promise<Result<RunningGateway>> {
  const now = deps.now ?? Date.now;
  let stopped = false;
  const cleanups: (() => void | Promise<void>)[] = [];
  const fail = async <T>(r: Result<unknown> & { ok: false }): Promise<Result<T>> => {
    for (const c of cleanups.reverse()) await c();
    return r as Result<T>;
  };

  // The caller (gw serve) created, locked and secured the data directory before reading settings from it.
  const dataDir = resolve(config.dataDir);
  const opened = openSqliteStore(join(dataDir, "gw.db"));
  if (!opened.ok) return opened;
  const store: Store = opened.value;
  cleanups.push(() => store.close());

  const cert = obtainServerCertificate(dataDir, config.certFile, config.keyFile);
  if (!cert.ok) return fail(cert);
  const clientTrust = loadClientCertFiles(config.clientCaFile, config.crlFile);
  if (!clientTrust.ok) return fail(clientTrust);
  const samlReady = await loadSaml(config);
  if (!samlReady.ok) return fail(samlReady);
  // The password hashing threads start before the ports open: under Deno starting one holds the
  // main thread 50 to 120 ms, a stall of every tunnel if it came with the first logins at once.
  const hashingThreads = deps.hasher.prestart?.();

  // One descriptor per TLS connection: the open-file limit decides how many sessions fit.
  const files = deps.raiseOpenFileLimit();
  const budget = descriptorBudget(files.ok ? files.value.soft : 1024);

  const poolCidr = parseCidr(config.pool);
  if (!poolCidr.ok) return fail(poolCidr);
  const pool = new AddressPool(poolCidr.value);
  // IPv6 inside the tunnel (--pool6): a second lease per session, routed by its own table.
  const pool6Cidr = config.pool6 === undefined ? undefined : parseIpv6Cidr(config.pool6);
  if (pool6Cidr && !pool6Cidr.ok) return fail(pool6Cidr);
  const pool6 = pool6Cidr && new AddressPool6(pool6Cidr.value);

  const tunOptions = {
    name: config.tunName,
    address: formatIpv4(pool.gatewayAddress),
    prefixLength: poolCidr.value.prefixLength,
    mtu: config.mtu,
    offload: config.tunOffload,
    ...(pool6 && { ipv6: { address: formatIpv6(pool6.gatewayAddress), prefixLength: pool6.cidr.prefixLength } }),
    log: deps.log,
    onLost: (why: string) => deps.onTunLost?.(`tun ${config.tunName}: ${why}`),
  };
  // --workers N: the kernel objects the workers share, made and kept here (docs/architecture.md §7).
  const plan = planWorkers({ requested: config.workers ?? 1, cores: (deps.cores ?? availableParallelism)(), unsupported: workersUnsupported(deps) });
  if (plan.kind === "refused") {
    const why = `workers ${config.workers} cannot run with ${plan.unsupported.join(", ")}: set workers to 1 (gw serve --workers 1) or leave those settings out`;
    return fail({ ok: false, error: new GwError("workers_unsupported", why) });
  }
  let kernel: WorkerKernel | undefined;
  let device: TunDevice | undefined;
  /** Why auto took one process after all: the kernel objects could not be made (e.g. no CAP_BPF). */
  let fellBack: string | undefined;
  if (plan.kind === "workers") {
    const opened = await deps.openWorkerKernel!({
      workers: plan.count,
      host: config.listen,
      tcpPort: config.port,
      udpPort: config.dtls ? (config.udpPort ?? config.port) : undefined,
      tun: tunOptions,
      pool4: { network: poolCidr.value.network, size: 2 ** (32 - poolCidr.value.prefixLength) },
      // Every live session can hold an IPv6 placement; the budget bounds them (the kernel's hash map needs a size).
      ...(pool6 && { pool6: { base: pool6.base, maxPlacements: Math.min(pool6.capacity, budget.sessions * plan.count) } }),
    });
    if (opened.ok) {
      const made = (kernel = opened.value);
      cleanups.push(() => made.close());
    } else if (plan.auto && opened.error.code !== "port_in_use") {
      // A taken port fails either way; anything else (no CAP_BPF, no multi-queue TUN) leaves one process.
      fellBack = `auto: ${opened.error.code}, see above`;
      deps.log(logLine`workers auto: one process instead of ${plan.count}: ${opened.error.message}`);
    } else return fail(opened);
  }
  if (!kernel) {
    const tun = await deps.openTun(tunOptions);
    if (!tun.ok) return fail(tun);
    const opened = (device = tun.value);
    cleanups.push(() => opened.close());
  }
  // With workers each has its own open-file limit (inherited from this process's, raised above).
  const sessionBudget = budget.sessions * (kernel ? kernel.tcp.length : 1);
  const sessionCap = () => Math.min(config.maxSessions ?? sessionBudget, sessionBudget);
  const tunName = kernel ? kernel.tun.name : device!.name;

  // Masquerading (--nat): one nft table of gw's own, removed at stop (and on a failed start).
  let nat: ActiveNat | undefined;
  if (config.nat) {
    const enabled = (deps.enableNat ?? enableNat)({ pool: formatCidr(poolCidr.value), tunName, outInterface: config.natInterface });
    if (!enabled.ok) return fail(enabled);
    nat = enabled.value;
    cleanups.push(() => removeNat(nat!, deps.log));
  }

  const drops = new DropCounters();
  // The tunnel port's login front: unauthenticated connections counted and capped (issue 8).
  const frontCounters = new FrontCounters();
  const admission = new ConnectionAdmission({ maxPerAddress: FRONT_LIMITS.maxUnauthenticatedPerAddress, maxTotal: budget.unauthenticated });
  let udp: UdpSocket | undefined;
  if (config.dtls && !kernel) {
    const udpPort = config.udpPort ?? config.port;
    const opened = await deps.openUdp(config.listen, udpPort);
    if (!opened.ok) return fail(opened);
    const socket = (udp = opened.value);
    cleanups.push(() => socket.close());
  }
  const sessions = new SessionRegistry(config.cookieTimeout * 1000, now);
  const drain = new Drain({ sessions: () => sessions.size, now, log: deps.log, onEnd: (how) => deps.onDrained?.(how) });
  sessions.onEnd((session, reason) => {
    plane?.endSession(session);
    deps.log(logLine`session ended session=${session.id} user=${session.user} reason=${reason}`);
  });
  // With workers each has its own data plane; their sessions' ends reach them through SessionWorkers.
  const plane = device && new DataPlane({
    tun: device,
    udp,
    dtlsHandshake: { gcm: deps.createGcmKey },
    sessions,
    pool,
    pool6,
    compiler: new PolicyCompiler([poolCidr.value], pool6 ? [pool6.cidr] : []),
    // Read lazily: the control plane is built below, and the source is used only once sessions exist.
    policySource: {
      policyOf: (session) => policySource.policyOf(session),
      groupRuleCount: (group) => policySource.groupRuleCount(group),
    },
    drops,
    now,
    log: deps.log,
    onDropNotice: (n) =>
      control.events.emit({ type: "policy.drop", session: n.session.id, user: n.session.user, group: n.session.group, rule: n.rule, peer: n.peer, protocol: n.protocol, port: n.port, drops: n.drops }),
  });
  const udpPort = () => (kernel ? kernel.udpPort : plane?.dtls?.port);
  let workers: SessionWorkers | undefined;

  // Usage ledger, quotas, expiry (issue 9): built before the control plane, which flushes through it.
  const usage = new UsageKeeper({ store: store.usage, sessions, now, log: deps.log, flushSeconds: config.usageFlushSeconds, retentionDays: () => config.usageRetentionDays });

  // ── Control plane (issue 4): users, groups, tokens, sessions, config, events, audit ──
  const startedAt = now();
  // Brute-force protection: lives with the run, visible through the control plane (gw bans).
  const guard = new LoginGuard({
    maxFailuresPerIp: config.loginMaxFailuresPerIp,
    maxFailuresPerUser: config.loginMaxFailuresPerUser,
    windowSeconds: config.loginFailureWindow,
    banSeconds: config.loginBanSeconds,
    now,
    onBan: (ban) => {
      const until = new Date(ban.until).toISOString();
      deps.log(
        ban.user
          ? logLine`login banned user=${ban.user} ip=${ban.ip} failures=${ban.failures} until=${until}`
          : logLine`login banned ip=${ban.ip} failures=${ban.failures} until=${until}`,
      );
      control.events.emit({ type: "auth.ban", ip: ban.ip, user: ban.user ?? null, failures: ban.failures, until: ban.until });
    },
  });
  // How long a login refused by the busy password hasher is told to wait (also shown by gw status).
  const busyRetry = new BusyRetryAdvice({ now, random: Math.random });
  const control = new ControlPlane({
    store,
    otpKey: otpKeySource(dataDir),
    guard,
    hasher: deps.hasher,
    sessions,
    authStats: new AuthStats(),
    now,
    flushUsage: () => usage.ledger.flush(),
    // A user's rules, rates or routes changed: the control plane resolves the policy, the data plane applies it.
    reapplyPolicy: (session, policy) => (workers ? workers.applyPolicy(session, compilePolicy(policy)) : plane!.firewalls.applyPolicy(session, compilePolicy(policy))),
    usageTotals: () => usage.ledger.totalsOfRun(),
    runtime: {
      startedAt,
      listeners: () => ({
        tunnel: { host: config.listen, tcpPort: config.port, udpPort: udpPort() ?? null, tlsVersions: ["TLSv1.2", "TLSv1.3"] },
        api: management ? { host: management.host, port: management.port, addresses: management.addresses, tlsVersions: ["TLSv1.2", "TLSv1.3"] } : null,
      }),
      tun: () => ({ name: tunName, state: stopped ? "down" : "up" }),
      pool: () => ({ cidr: formatCidr(poolCidr.value), capacity: pool.capacity, used: pool.used }),
      ...(pool6 && { pool6: () => ({ cidr: formatIpv6Cidr(pool6.cidr), capacity: pool6.capacity, used: pool6.used }) }),
      drops,
      busyRetrySeconds: () => busyRetry.mean,
      front: () =>
        workers ? workers.frontStats() : { unauthenticated: admission.count(), refused: Object.fromEntries(frontCounters.refused), timedOut: Object.fromEntries(frontCounters.timedOut) },
      settings: {
        current: () => settingsOf(config),
        flagged: deps.flagged ?? [],
        applyLive: (s) => Object.assign(config, Object.fromEntries(LIVE_SETTING_KEYS.map((k) => [k, s[k]]))),
      },
      lifecycle: {
        drain: (request) => drain.start(request),
        draining: () => drain.current(),
        reload: async () =>
          reloadGateway({
            dataDir,
            config,
            reread: deps.reread ?? (() => ok(config)),
            server: { setSecureContext: (options, clientTrust) => tunnelPort.setSecureContext(options, clientTrust) },
            clientCheck,
            pin: () => pin,
            setPin: (p) => (pin = p),
            now,
            log: deps.log,
          }),
      },
    },
  });
  let management: RunningManagement | undefined;
  usage.enforce({ usage: control.usage, events: control.events, audit: control.audit, limitRates: (id, up, down) => {
    const session = sessions.findById(id);
    if (session) sessions.limitRates(session, up, down);
  } });
  const { users, groups } = control;
  // A group changed into something clients may not apply fully (e.g. past 200 routes): the log says so.
  cleanups.push(control.events.subscribe((e) => {
    if (e.type !== "group.created" && e.type !== "group.updated") return;
    const view = groups.get(e.name);
    for (const warning of view.ok ? (view.value.warnings ?? []) : []) deps.log(logLine`group ${e.name}: ${warning}`);
  }));
  // Policy changes reach live sessions (issue 9): the registry hands them to the data plane's firewalls.
  const policySource = storedPolicySource(store, users, groups, () => ({ rateUp: config.defaultRateUp, rateDown: config.defaultRateDown }));
  sessions.enforcePoliciesWith({
    reapply: (pick) => (workers ? workers.reapply(pick) : plane!.firewalls.reapply(pick).sessions),
    limitRates: (session, up, down) => (workers ? workers.limitRates(session, up, down) : plane!.firewalls.limitRates(session, { up, down })),
  });
  cleanups.push(reapplyOnChange(control.events, sessions));
  const passwordStep = new PasswordStep(users, busyRetry, {
    clock: () => performance.now(),
    checked: (ms) => control.authStats.passwordChecked(ms),
  });
  const saml = setupSaml(config, samlReady.value, { findUser: (name) => store.getUser(name), groupExists: (name) => groups.get(name).ok, now, log: deps.log });
  // SAML's pages on the tunnel port: this process's listener answers them, or the workers pass them here.
  const samlPages = saml && ((request: HttpRequest) => handleSamlRequest(request, saml.front));
  const flow = new LoginFlow({
    users,
    groups,
    sessions,
    stats: control.authStats,
    events: control.events,
    reserveAddress: (address) => pool.leaseExact(address),
    defaultMaxSessionsPerUser: () => config.maxSessionsPerUser,
    defaultRates: () => ({ rateUp: config.defaultRateUp, rateDown: config.defaultRateDown }),
    groupDefaults: () => config.groupDefaults ?? {},
    maxSessions: sessionCap,
    draining: () => drain.active(),
    accountCheck: (user) => usage.refusal(user),
    steps: {
      password: passwordStep, otp: new OtpStep(control.otp, now, deps.log),
      ...(saml && { saml: saml.step }),
      ...(clientTrust.value && { certificate: new CertificateStep({ findUser: (name) => store.getUser(name), attribute: config.certUserAttribute ?? "cn" }) }),
    },
    guard,
    now,
    log: deps.log,
  });
  // ── end control plane ──

  const exportPsk = createPskExporter(deps.log);
  // Read at each CONNECT: mtu, dpd, keepalive and mobileDpd are live settings.
  const tunnelDefaults = (): TunnelDefaults => ({
    mtu: config.mtu,
    dpdSeconds: config.dpd,
    keepaliveSeconds: config.keepalive,
    mobileDpdSeconds: config.mobileDpd,
    poolPrefixLength: poolCidr.value.prefixLength,
    serverName: `gw ${VERSION}`,
  });
  // Swapped by a reload when the CA or CRL files change; undefined without a client CA.
  const clientCheck = { current: clientTrust.value && createClientCertificateCheck(clientTrust.value, now, deps.log) };
  const clientCertificate = clientCheck.current && ((socket: TLSSocket) => clientCheck.current?.(socket));
  let pin = cert.value.pin;
  // The tunnel port: this process's TLS listener, or N workers on the steered group (docs/architecture.md §7).
  let tunnelPort: TunnelPort;
  if (kernel) {
    workers = new SessionWorkers({
      kernel,
      spawn: deps.workerProcesses!.spawn,
      selfArgv: deps.workerProcesses!.selfArgv,
      sessions,
      pool,
      pool6,
      ...(samlPages && { samlPages }),
      flow,
      policySource,
      defaults: tunnelDefaults,
      start: {
        certPem: cert.value.certPem,
        keyPem: cert.value.keyPem,
        pool: poolCidr.value,
        // The workers ask for client certificates and check them; the login flow here reads the verdict.
        ...(clientTrust.value && { clientCa: clientTrust.value.source }),
        // Each worker inherits this process's open-file limit, so each has the same budget.
        maxOpen: budget.sessions + budget.unauthenticated,
        unauthenticated: budget.unauthenticated,
        tlsRecordBatching: config.tlsRecordBatching,
        tlsRecordReading: config.tlsRecordReading,
      },
      now,
      log: deps.log,
      logFormat: config.logFormat,
      drops,
      onDropNotice: (n) =>
        control.events.emit({ type: "policy.drop", session: n.session.id, user: n.session.user, group: n.session.group, rule: n.rule, peer: n.peer, protocol: n.protocol, port: n.port, drops: n.drops }),
      onTunLost: (why) => deps.onTunLost?.(`tun ${config.tunName}, ${why}`),
    });
    const started = await workers.start();
    if (!started.ok) return fail(started);
    const running = workers;
    tunnelPort = {
      setSecureContext: (options, clientTrust) => running.setCertificate(String(options.cert), String(options.key), clientTrust?.source),
      close: () => running.stop(),
    };
  } else {
    const local = plane!;
    const sealing = config.tlsRecordBatching ? recordSealing(deps.createGcmKey, deps.openRawTcp, udp, { reading: config.tlsRecordReading, log: deps.log }) : undefined;
    const listener = await listenTls({
      host: config.listen,
      port: config.port,
      certPem: cert.value.certPem,
      keyPem: cert.value.keyPem,
      clientCaPems: clientTrust.value?.anchors.map((ca) => ca.toString()),
      guard: {
        admission,
        counters: frontCounters,
        handshakeMs: FRONT_LIMITS.handshakeMs,
        maxOpen: budget.sessions + budget.unauthenticated,
        onPause: (open) => deps.log(logLine`tunnel port: not accepting for now: ${open} connections hold the descriptors the open-file limit ${budget.limit} leaves (see gw doctor); resumes as connections end`),
        onResumeError: (e) => deps.log(logLine`tunnel port: listening again failed: ${e.message}; retrying`),
        onHandshakeTimeout: handshakeTimeoutLog(deps.log, now, FRONT_LIMITS.handshakeMs),
      },
      sealing,
      onConnection: (socket, slot, output, reading) =>
        serveConnection(socket, {
          plane: local,
          flow,
          grant: (request) => grantConnect(request.headers, local, pool, tunnelDefaults()),
          pool6,
          exportPsk,
          counters: frontCounters,
          samlPages,
          clientCertificate,
        }, slot, output, reading),
    });
    if (!listener.ok) return fail(listener);
    const server: Server = listener.value;
    tunnelPort = {
      setSecureContext: (options) => server.setSecureContext(options),
      close: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          setTimeout(resolve, 2000).unref?.();
        }),
    };
  }

  // ── Management API (issue 4): its own TLS port, never the tunnel port ──
  const api = startManagement({ control, config, tunnelAddress: formatIpv4(pool.gatewayAddress), dataDir, certPem: cert.value.certPem, keyPem: cert.value.keyPem, pin: cert.value.pin, serveHttps: deps.serveHttps, log: deps.log });
  if (!api.ok) {
    await tunnelPort.close();
    return fail(api);
  }
  management = api.value;
  // ── end management API ──

  // A store that refuses writes (disk full) is said every 30 s, not every second.
  const stampErrors = new RateLimitedLog(30_000, now, deps.log);
  const housekeeping = setInterval(() => {
    sessions.sweep();
    plane?.tick(now());
    usage.tick();
    const stamps = control.users.flushLoginStamps();
    if (!stamps.ok) stampErrors.say(logLine`users: ${stamps.error.message}`);
    drain.tick();
  }, 1000);

  // Said once the start can no longer fail: a failed start prints one line, its error.
  const forwarding = checkForwarding();
  if (forwarding.status !== "ok") deps.log(logLine`${forwarding.detail}: ${forwarding.fix}`);
  const forwarding6 = pool6 ? checkIpv6Forwarding() : undefined;
  if (forwarding6 && forwarding6.status !== "ok") deps.log(logLine`${forwarding6.detail}: ${forwarding6.fix}`);
  if (nat) deps.log(logLine`nat: masquerading ${formatCidr(poolCidr.value)} out of ${config.natInterface ?? `every interface but ${tunName}`} (nft table ip ${nat.table})`);
  if (!files.ok) deps.log(logLine`open files: ${files.error.message}: assuming a limit of 1024`);
  if (hashingThreads && !hashingThreads.ok) deps.log(logLine`password hashing: ${hashingThreads.error.message}; each login tries again`);
  if (config.maxSessions !== undefined && config.maxSessions > sessionBudget) {
    deps.log(logLine`maxSessions ${config.maxSessions} needs a higher open-file limit than ${budget.limit}: see gw doctor`);
  }
  const adminToken = ensureAdminToken(store, now());
  const firstAdmin = await ensureFirstAdmin(control.admins);
  const gatewayAddress = formatIpv4(pool.gatewayAddress);
  const { prefixLength } = poolCidr.value;
  const poolText = pool6 ? `${formatCidr(poolCidr.value)} and ${formatIpv6Cidr(pool6.cidr)} (tun ${formatIpv6(pool6.gatewayAddress)})` : formatCidr(poolCidr.value);
  const { source } = cert.value;
  // Two whole templates: a nested template would be one (quoted) value in logLine.
  const dtlsPort = udpPort();
  const processes = describeProcesses(plan, fellBack);
  deps.log(
    dtlsPort !== undefined
      ? logLine`gw ${VERSION} ready: TLS on ${formatHostPort(config.listen, config.port)}, DTLS on UDP ${dtlsPort}, tun ${tunName} ${gatewayAddress}/${prefixLength}, pool ${poolText}, certificate ${source} ${pin}, management API on ${management.described}, sessions up to ${sessionCap()} (open-file limit ${budget.limit}), ${processes}`
      : logLine`gw ${VERSION} ready: TLS on ${formatHostPort(config.listen, config.port)}, no DTLS, tun ${tunName} ${gatewayAddress}/${prefixLength}, pool ${poolText}, certificate ${source} ${pin}, management API on ${management.described}, sessions up to ${sessionCap()} (open-file limit ${budget.limit}), ${processes}`,
  );

  return ok({
    get pin() {
      return pin;
    },
    adminToken,
    firstAdmin,
    address: { host: config.listen, port: config.port },
    plane,
    ...(workers && { collectWorkers: () => workers?.collect() }),
    control,
    api: { url: management.url, host: management.host, port: management.port, addresses: management.addresses, described: management.described },
    reload: (actor) => control.lifecycle.reload(actor),
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(housekeeping);
      await management?.stop();
      sessions.endAll("server_stop");
      usage.stop();
      const stamps = control.users.flushLoginStamps();
      if (!stamps.ok) deps.log(logLine`users: ${stamps.error.message}`);
      await tunnelPort.close();
      plane?.close();
      if (nat) removeNat(nat, deps.log);
      store.close();
    },
  });
}


/** The tunnel port as the rest of the gateway sees it: one listener, or the workers on the steered group. */
interface TunnelPort {
  /** A reload's new certificate and key (server.setSecureContext's options), with the client CA and CRL it read. */
  setSecureContext(options: SecureContextOptions, clientTrust?: ClientCertTrust): void;
  close(): Promise<void>;
}

/** Why worker processes cannot run here (empty: they can): they carry every setting, on both runtimes. */
function workersUnsupported(deps: GatewayDeps): string[] {
  return !deps.openWorkerKernel || !deps.workerProcesses ? ["this runtime (it cannot start worker processes)"] : [];
}
