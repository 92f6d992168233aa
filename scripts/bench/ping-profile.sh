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
[ -f "$BENCH_DIR/lib.sh" ] || { echo "bench harness not found at $BENCH_DIR (set BENCH_DIR)" >&2; exit 1; }
command -v perf >/dev/null || { echo "perf is needed (apt-get install linux-perf)" >&2; exit 1; }
mkdir -p "$out/jit"
. "$BENCH_DIR/lib.sh"
. "$repo/scripts/bench/gw-under-bench.sh"
GW_NAME=gw
# JavaScriptCore writes its JIT dump only when asked at start.
gw_prepare() { bash -c "$GW_PREPARE_CMD"; GW_CMD="env BUN_JSC_useJITDump=1 BUN_JSC_jitDumpDirectory='$out/jit' $GW_RUN_CMD"; }
WORK=$(mktemp -d "/tmp/${BENCH_PREFIX}work.XXXXXX"); chmod 755 "$WORK"
SAMPLES=$WORK/samples.jsonl; : > "$SAMPLES"
trap bench_cleanup EXIT
if ! ip netns list | awk '{print $1}' | grep -qx "$NS_GW"; then "$BENCH_DIR/netns-up.sh" >&2; CREATED_NETNS=1; fi
make_credentials; gw_prepare; gw_start
extra=(); [ "$mode" = cstp ] && extra=(--no-dtls)
oc_start "$OC_IF" "$LAN_NET" "${extra[@]}"
wait_ping "$OC_PID" 20 || die "the tunnel did not pass a ping"
[ "$mode" = dtls ] && { wait_log "$WORK/oc-$OC_IF.log" 'Established DTLS connection' 5 || die "DTLS was not established"; }
ip netns exec "$NS_CLIENT" ping -q -f -c "${WARM:-3000}" "$LAN_ADDR" > /dev/null 2>&1 || true
pings=${PINGS:-400}
perf record -F "${PERF_HZ:-20000}" -g -t "$GW_PID" -o "$out/perf.data" -- sleep "$(( pings / 100 ))" > /dev/null 2>&1 &
perf_pid=$!
sleep 0.3
ping_out=$(ip netns exec "$NS_CLIENT" ping -n -c "$pings" -i 0.01 -W1 "$LAN_ADDR" 2>&1 || true)
wait "$perf_pid" || true
echo "$mode: $(printf '%s\n' "$ping_out" | tail -1)"
dump=$(ls "$out"/jit/jit-*-"$GW_PID".dump 2> /dev/null | head -1)
[ -n "$dump" ] || die "no JIT dump of the gateway ($GW_PID) in $out/jit"
perf script -i "$out/perf.data" -F ip,sym,dso 2> /dev/null > "$out/perf.txt"
"$repo/node_modules/.bin/bun" "$repo/scripts/bench/profile/perf-by-function.ts" "$dump" "$out/perf.txt" | tee "$out/report.txt"
echo "results in $out"
