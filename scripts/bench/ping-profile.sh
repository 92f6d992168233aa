#!/usr/bin/env bash
# Where gw's CPU goes for one ping through the tunnel, by JavaScript function: openconnect in the
# shared harness's network namespaces, a warm-up flood, then `perf record` of gw's main thread
# while pings go every 10 ms, read with JavaScriptCore's JIT dump (profile/perf-by-function.ts).
# A diagnosis, not a figure for the goals: perf slows what it watches.
#   usage: scripts/bench/ping-profile.sh [dtls|cstp] [OUT_DIR]   (root; perf, openconnect; the binary in dist/)
# Knobs: BENCH_DIR (default ../shared/bench beside the repo), PINGS (default 400), WARM (flood
# pings first, default 3000), PERF_HZ (default 20000).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
BENCH_DIR=${BENCH_DIR:-$repo/../shared/bench}
mode=${1:-dtls}
out=${2:-$(mktemp -d /tmp/gw-ping-profile.XXXXXX)}
case "$mode" in dtls | cstp) ;; *) echo "usage: $0 [dtls|cstp] [OUT_DIR]" >&2; exit 2 ;; esac
command -v perf >/dev/null || { echo "perf is needed (apt-get install linux-perf)" >&2; exit 1; }
mkdir -p "$out/jit"
# JavaScriptCore writes its JIT dump only when asked at start.
GW_ENV="BUN_JSC_useJITDump=1 BUN_JSC_jitDumpDirectory='$out/jit'"
. "$repo/scripts/bench/one-pinged-session.sh"
pings=${PINGS:-400}
perf record -F "${PERF_HZ:-20000}" -g -t "$GW_PID" -o "$out/perf.data" -- sleep "$(( pings / 100 ))" > /dev/null 2>&1 &
perf_pid=$!
sleep 0.3
ping_out=$(ip netns exec "$NS_CLIENT" ping -n -c "$pings" -i 0.01 -W1 "$LAN_ADDR" 2>&1 || true)
wait "$perf_pid" || true
echo "$mode: $(printf '%s\n' "$ping_out" | tail -1)"
dump=$(ls "$out"/jit/jit-*-"$GW_PID".dump 2> /dev/null | head -1)
[ -n "$dump" ] || die "no JIT dump of the gateway ($GW_PID) in $out/jit"
perf script -i "$out/perf.data" -F time,ip,sym,dso 2> /dev/null > "$out/perf.txt"
"$repo/node_modules/.bin/bun" "$repo/scripts/bench/profile/perf-by-function.ts" "$dump" "$out/perf.txt" | tee "$out/report.txt"
echo "results in $out"
