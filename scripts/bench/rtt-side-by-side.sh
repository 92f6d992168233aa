#!/usr/bin/env bash
# Ping RTT through the tunnel, gw and Debian's ocserv at the same time (issue 13: "ping RTT through
# the tunnel at most 1.2x ocserv on both channels"). vs-ocserv.sh measures the two gateways minutes
# apart, and on this shared machine a 10 ms ping's RTT moves by a third from one minute to the next
# (docs/benchmarks.md), so one run's ratio says little. Here both gateways run in the harness's
# gateway namespace at once (gw on $GW_PORT, ocserv on OCSERV_PORT with its own address pool), one
# openconnect holds a session with each, and rounds of pings alternate between the two tunnels
# (which goes first alternates too). Prints each round's medians and the median of the rounds'
# ratios, per channel, and beside them the CPU each gateway spent per ping in its round beyond
# what it spends idle (every thread of its process tree, from the kernel's schedstat; each
# gateway idles through the other's round, which gives its baseline): at one ping per 10 ms a
# gateway's round trip is mostly its own per-packet work, so this says how much of a gap is CPU
# and not a wait. Not a test: it prints figures.
#   usage: scripts/bench/rtt-side-by-side.sh [OUT_DIR]     (root; apt-get install ocserv openconnect jq)
# Knobs: ROUNDS (8), PINGS (300 per round, every 10 ms), WARM (a flood of 3000 first), MODES
# ("dtls cstp"), OCSERV_PORT (4443), GW_FLAGS and GW_RUNTIME (as in vs-ocserv.sh), BENCH_DIR,
# ECHO: "icmp" (default; the LAN namespace's kernel answers, inside the gateway's TUN write) or
# "udp" (a program in the LAN namespace answers, side-by-side/udp-echo.ts: the answer reaches
# the gateway's TUN after its write, as a real server's does).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bench=${BENCH_DIR:-$repo/../shared/bench}
out=${1:-$(mktemp -d /tmp/gw-rtt.XXXXXX)}
mkdir -p "$out"
[ -f "$bench/lib.sh" ] && [ -f "$bench/anchor-ocserv.sh" ] || { echo "bench harness not found at $bench (set BENCH_DIR)" >&2; exit 1; }
ROUNDS=${ROUNDS:-8}
PINGS=${PINGS:-300}
WARM=${WARM:-3000}
MODES=${MODES:-dtls cstp}
ECHO=${ECHO:-icmp}
ECHO_PORT=7777
case "$ECHO" in icmp | udp) ;; *) echo "ECHO is icmp or udp" >&2; exit 2 ;; esac
ECHO_PID=""
side_by_side_stop_extra() { [ -n "$ECHO_PID" ] && stop_pid "$ECHO_PID" TERM 3; ECHO_PID=""; }
. "$repo/scripts/bench/side-by-side/both-gateways.sh"
bun=$repo/node_modules/.bin/bun
if [ "$ECHO" = udp ]; then
    ip netns exec "$NS_LAN" "$bun" "$repo/scripts/bench/side-by-side/udp-echo.ts" serve "$ECHO_PORT" > "$WORK/udp-echo.log" 2>&1 &
    ECHO_PID=$!
fi

median_rtt() {  # target: the median of PINGS pings every 10 ms through whichever tunnel routes it
    if [ "$ECHO" = udp ]; then
        ip netns exec "$NS_CLIENT" "$bun" "$repo/scripts/bench/side-by-side/udp-echo.ts" ping "$1" "$ECHO_PORT" "$PINGS" 10
        return
    fi
    ip netns exec "$NS_CLIENT" ping -n -c "$PINGS" -i 0.01 -W1 "$1" 2>/dev/null |
        grep -o 'time=[0-9.]*' | cut -d= -f2 | sort -n | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]; else print "null"}'
}

round_of() {    # target: "median_ms gw_cpu_us ocserv_cpu_us" over one round of pings to target
    local gw0 ocserv0 median
    gw0=$(tree_cpu_us "$GW_PID_OF_GW"); ocserv0=$(tree_cpu_us "$GW_PID_OF_OCSERV")
    median=$(median_rtt "$1")
    echo "$median $(( $(tree_cpu_us "$GW_PID_OF_GW") - gw0 )) $(( $(tree_cpu_us "$GW_PID_OF_OCSERV") - ocserv0 ))"
}

for mode in $MODES; do
    connect_both "$mode"
    log "$mode: both sessions up; warming each with a flood of $WARM pings"
    ip netns exec "$NS_CLIENT" ping -q -f -c "$WARM" "$GW_TARGET" > /dev/null 2>&1 || true
    ip netns exec "$NS_CLIENT" ping -q -f -c "$WARM" "$OCSERV_TARGET" > /dev/null 2>&1 || true
    for ((round = 1; round <= ROUNDS; round++)); do
        # Each gateway idles through the other's round: that round's CPU is its baseline.
        if ((round % 2)); then g=$(round_of "$GW_TARGET"); o=$(round_of "$OCSERV_TARGET")
        else o=$(round_of "$OCSERV_TARGET"); g=$(round_of "$GW_TARGET"); fi
        read -r g g_busy o_idle <<< "$g"; read -r o g_idle o_busy <<< "$o"
        g_cpu=$(( (g_busy - g_idle) / PINGS )); o_cpu=$(( (o_busy - o_idle) / PINGS ))
        sample --arg mode "$mode" --argjson round "$round" --argjson gw "$g" --argjson ocserv "$o" \
            --argjson gw_cpu "$g_cpu" --argjson ocserv_cpu "$o_cpu" \
            --argjson gw_idle "$(( g_idle / PINGS ))" --argjson ocserv_idle "$(( o_idle / PINGS ))" \
            '{kind: "rtt", mode: $mode, round: $round, gw_ms: $gw, ocserv_ms: $ocserv, gw_cpu_us_per_ping: $gw_cpu, ocserv_cpu_us_per_ping: $ocserv_cpu, gw_idle_cpu_us_per_interval: $gw_idle, ocserv_idle_cpu_us_per_interval: $ocserv_idle}'
        log "$mode round $round: gw $g ms ($g_cpu µs CPU a ping; idle $(( g_idle / PINGS )) µs in 10 ms), ocserv $o ms ($o_cpu µs; idle $(( o_idle / PINGS )))"
    done
    disconnect_both
done

cp "$SAMPLES" "$out/rtt-samples.jsonl"
jq -rs --arg pings "$PINGS" --arg echo "$ECHO" '
    def med: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    def r3: . * 1000 | round / 1000;
    map(select(.kind == "rtt")) | group_by(.mode)[]
    | (map(select(.gw_ms != null and .ocserv_ms != null and .ocserv_ms > 0) | .gw_ms / .ocserv_ms)) as $ratios
    | "\(.[0].mode): \(length) rounds of \($pings) pings (\($echo) echo) at 10 ms, alternated; median of the rounds: gw \(map(.gw_ms) | med | r3) ms, ocserv \(map(.ocserv_ms) | med | r3) ms; gw/ocserv per round \($ratios | map(. * 100 | round / 100) | join(" ")), median \($ratios | med | . * 100 | round / 100) (goal: at most 1.2); CPU a ping beyond idle, median of the rounds: gw \(map(.gw_cpu_us_per_ping) | med) µs, ocserv \(map(.ocserv_cpu_us_per_ping) | med) µs (idle: \(map(.gw_idle_cpu_us_per_interval) | med) and \(map(.ocserv_idle_cpu_us_per_interval) | med) µs per 10 ms)"
' "$SAMPLES" | tee "$out/rtt-compare.txt"
echo "results in $out (logs in $WORK)"
