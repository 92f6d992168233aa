#!/usr/bin/env bash
# gw against Debian's ocserv, measured by the shared bench harness (real openconnect in network
# namespaces: connect time, iperf3 throughput over DTLS and over CSTP, CPU, memory per session)
# in one run, then the B/A ratios (B = gw). Not a test: it prints figures.
#   usage: scripts/bench/vs-ocserv.sh [OUT_DIR]      (root; apt-get install ocserv openconnect iperf3 jq)
# Knobs: BENCH_DIR (default ../shared/bench beside the repo), GW_RULES (give the bench group a
# policy of that many access rules, e.g. 20; default: the starter rule), SKIP_OCSERV=1 (measure gw
# only, e.g. to compare GW_RULES runs with compare.sh; no side-by-side RTT then), RTT_SIDE_BY_SIDE=0
# (leave out the phase after the harness's: ping RTT with both gateways at once, rtt-side-by-side.sh,
# about 3 min), SCALE_SESSIONS (default 1000; 0 leaves out the phase after that: memory per session and idle
# CPU from the load generator, sessions-at-scale.ts on each gateway in turn, about 4 min),
# MULTI_CLIENTS (default 4; 0 leaves out the phase after it: that many clients moving data at once,
# multi-client.sh, about 5 min), LOGIN_STORM (default 50; 0 leaves out the last phase: a live
# session's RTT while that many logins run at once, login-storm.ts on gw's binary, or its bundle under GW_RUNTIME=deno, without GW_FLAGS, about 1 min), GW_FLAGS
# (more `gw serve` flags, e.g. --no-tun-offload; GW_NAME names that run's result) and the
# harness's own (REPS, CONNECTS, IPERF_SECS, N_CLIENTS, ...; see its README).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bench=${BENCH_DIR:-$repo/../shared/bench}
out=${1:-$(mktemp -d /tmp/gw-bench.XXXXXX)}
mkdir -p "$out"
[ -x "$bench/bench-gateway.sh" ] || { echo "bench harness not found at $bench (set BENCH_DIR)" >&2; exit 1; }
. "$repo/scripts/bench/gw-under-bench.sh"
name=${GW_NAME:-gw}
[ -z "${GW_RULES:-}" ] || name=gw-$GW_RULES-rules
[ -n "${SKIP_OCSERV:-}" ] || "$bench/anchor-ocserv.sh" "$out/ocserv.json"
"$bench/bench-gateway.sh" --name "$name" \
    --prepare "$GW_PREPARE_CMD" \
    --cmd "$GW_RUN_CMD" \
    --version "'$GW_BIN' --version" \
    "$out/$name.json"
[ -n "${SKIP_OCSERV:-}" ] || "$bench/compare.sh" "$out/ocserv.json" "$out/$name.json" | tee "$out/compare.txt"
# Connect with and without the password hash (issue 13: at most 1.2x ocserv plus the hash's own
# time). ocserv's own crypt hash stays in its figure: the goal reads its connect as it is.
# Two measures of the hash: a separate process's (password-hash-time.ts), and gw's own, each login's
# check as gw timed it during the connect phase (password_check_ms in its "login ok" lines: the
# harness keeps gw's log in its work directory; the phase's logins are the log's first ones).
hash=$("$repo/node_modules/.bin/bun" "$repo/scripts/bench/password-hash-time.ts")
work_dir=$(jq -r '.work_dir // empty' "$out/$name.json")
connects=$(jq -r '.params.connects' "$out/$name.json")
in_gw=$( { grep -o 'login ok .* password_check_ms=[0-9.]*' "$work_dir/gw.log" 2>/dev/null || true; } | head -n "$connects" | sed 's/.*password_check_ms=//' | jq -s 'sort | if length > 0 then .[length / 2 | floor] else null end')
jq -rn --argjson h "$hash" --argjson gh "$in_gw" --slurpfile g "$out/$name.json" --argjson o "$([ -n "${SKIP_OCSERV:-}" ] && echo null || cat "$out/ocserv.json")" '
    ($g[0].connect_ms.median) as $gc | ($o.connect_ms.median // null) as $oc
    | def r1: . * 10 | round / 10; def r2: . * 100 | round / 100;
    "password hash (argon2id m=\($h.memoryKiB) KiB, t=\($h.passes)), one verification in a separate process with gw'"'"'s hasher: \($h.ms) ms back to back, \($h.afterIdleMs) ms after a second of idle (as a connect meets it), page faults per verification \($h.faults) and \($h.afterIdleFaults); with Bun.password alone \($h.nativeMs) and \($h.nativeAfterIdleMs) ms (\($h.nativeAfterIdleFaults) faults after idle)",
      "password check in gw during the connects (median of its own password_check_ms): \(if $gh then "\($gh | r1) ms" else "not found in its log" end)",
      "connect, start to first ping: gw \($gc) ms, minus the hash \(($gc - $h.ms) | r1) ms (back to back) or \(($gc - $h.afterIdleMs) | r1) ms (after idle)"
        + (if $gh then " or \(($gc - $gh) | r1) ms (gw'"'"'s own check)" else "" end)
        + (if $oc then "; ocserv \($oc) ms; (gw - hash) / ocserv = \(($gc - $h.ms) / $oc | r2) or \(($gc - $h.afterIdleMs) / $oc | r2)"
             + (if $gh then " or \(($gc - $gh) / $oc | r2) (gw'"'"'s own check)" else "" end) + " (goal: at most 1.2)" else "" end)
' | tee -a "$out/compare.txt"
# Where each run lost packets and how busy the client and the host were: throughput alone does not
# say whether the gateway, the client or the loss pattern held a direction back.
results=("$out/$name.json"); [ -n "${SKIP_OCSERV:-}" ] || results=("$out/ocserv.json" "${results[@]}")
"$repo/scripts/bench/where-lost.sh" "${results[@]}" | tee -a "$out/compare.txt"
# Ping RTT with both gateways running at once, rounds alternated (rtt-side-by-side.sh): the runs
# above measure them minutes apart, and the host moves a 10 ms ping's RTT by a third in that time.
if [ -z "${SKIP_OCSERV:-}" ] && [ "${RTT_SIDE_BY_SIDE:-1}" != 0 ]; then
  mkdir -p "$out/rtt"
  BENCH_DIR=$bench "$repo/scripts/bench/rtt-side-by-side.sh" "$out/rtt" > "$out/rtt/run.log" 2>&1 || echo "rtt-side-by-side.sh failed: see $out/rtt/run.log"
  sed 's/^/ping RTT side by side, /' "$out/rtt/rtt-compare.txt" 2>/dev/null | tee -a "$out/compare.txt" || true
fi
# Memory per session from the load generator (issue 13): the harness's "per session" figure above
# divides a few clients' difference by their number, mostly the heap's growth; this holds
# SCALE_SESSIONS sessions with DTLS on each gateway, under the same clients, and reads its
# (at N - idle) / N and its idle CPU while holding.
scale=${SCALE_SESSIONS:-1000}
if [ "${GW_RUNTIME:-bun}" = deno ] && [ "$scale" != 0 ]; then
  # sessions-at-scale.ts starts the compiled binary or the sources under Bun, not the bundle under Deno.
  echo "sessions at scale: left out under GW_RUNTIME=deno (the load generator's gateway runs under Bun)" | tee -a "$out/compare.txt"
elif [ -z "${SKIP_OCSERV:-}" ] && [ "$scale" != 0 ]; then
  "$repo/scripts/bench/scale-pair.sh" "$scale" "$out/scale" | tee -a "$out/compare.txt" || echo "scale-pair.sh failed: see $out/scale"
fi
# Several clients moving data at once (issue 13: aggregate at least 1.0x ocserv, which spreads its
# per-client processes over the cores): multi-client.sh's table, ocserv then gw, gw/ocserv.
clients=${MULTI_CLIENTS:-4}
if [ -z "${SKIP_OCSERV:-}" ] && [ "$clients" != 0 ]; then
  mkdir -p "$out/multi"
  if BENCH_DIR=$bench CLIENTS=$clients "$repo/scripts/bench/multi-client.sh" "$out/multi" > "$out/multi/run.log" 2>&1; then
    tee -a "$out/compare.txt" < "$out/multi/multi-compare.txt"
  else
    echo "multi-client.sh failed: see $out/multi/run.log" | tee -a "$out/compare.txt"
  fi
fi
# A login storm beside a live session (issue 13: no login storm stalls live sessions): gw alone,
# LOGIN_STORM logins at once, twice, with one openconnect session's ping RTT before and during.
storm=${LOGIN_STORM:-50}
if [ "$storm" != 0 ]; then
  mkdir -p "$out/storm"
  storm_variant=binary; [ "${GW_RUNTIME:-bun}" = deno ] && storm_variant=deno # the gateway the run above measured
  if "$repo/node_modules/.bin/bun" "$repo/scripts/bench/login-storm.ts" --logins "$storm" --rounds 2 --variant "$storm_variant" > "$out/storm/run.log" 2>&1; then
    grep -v '^login-storm: gw' "$out/storm/run.log" | sed 's/^/login storm, /' | tee -a "$out/compare.txt"
  else
    echo "login-storm.ts failed: see $out/storm/run.log" | tee -a "$out/compare.txt"
  fi
fi
echo "results in $out"
