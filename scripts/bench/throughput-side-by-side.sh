#!/usr/bin/env bash
# TCP throughput through the tunnel, gw and Debian's ocserv at the same time (issue 13: "throughput
# through DTLS and through CSTP, up and down, at least 1.2x ocserv in the same run"). On this
# shared machine one gateway's download through DTLS moves by a quarter from one vs-ocserv.sh run
# to the next (docs/benchmarks.md), more than the two gateways differ, so here both run at once
# (as in rtt-side-by-side.sh), one openconnect session with each, and rounds of iperf3 runs
# alternate between the two tunnels (which goes first alternates too). Prints each run's Mbit/s,
# each gateway's CPU over its run (every thread of its process tree, schedstat) and the datagrams
# lost at the client's UDP receive buffer, then per channel and direction the median of the
# rounds: Mbit/s, the gw/ocserv ratio, Mbit per gateway CPU-second. Not a test: it prints figures.
#   usage: scripts/bench/throughput-side-by-side.sh [OUT_DIR]   (root; apt-get install ocserv openconnect iperf3 jq)
# Knobs: ROUNDS (5), SECS (6 per iperf3 run), MODES ("dtls cstp"), DIRS ("down up"), OCSERV_PORT
# (4443), GW_FLAGS and GW_RUNTIME (as in vs-ocserv.sh), BENCH_DIR. RATE (iperf3's -b, e.g. 400M)
# holds each run to that rate: both gateways then carry the same load, and Mbit per gateway
# CPU-second compares their cost per bit alone, where at full speed a download's rate is set by
# the client's losses (docs/benchmarks.md) and moves each gateway's CPU with it.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bench=${BENCH_DIR:-$repo/../shared/bench}
out=${1:-$(mktemp -d /tmp/gw-throughput.XXXXXX)}
mkdir -p "$out"
[ -f "$bench/lib.sh" ] && [ -f "$bench/anchor-ocserv.sh" ] || { echo "bench harness not found at $bench (set BENCH_DIR)" >&2; exit 1; }
ROUNDS=${ROUNDS:-5}
SECS=${SECS:-6}
RATE=${RATE:-}
MODES=${MODES:-dtls cstp}
DIRS=${DIRS:-down up}
. "$repo/scripts/bench/side-by-side/both-gateways.sh"
need iperf3

ip netns exec "$NS_LAN" iperf3 -s -p "$IPERF_PORT" > "$WORK/iperf-server.log" 2>&1 &
IPERF_SERVER=$!
side_by_side_stop_extra() { stop_pid "$IPERF_SERVER" TERM 3; }
sleep 0.3

run_of() {  # target dir gateway_pid: "mbit_per_s cpu_us client_udp_drops" of one iperf3 run
    local args=(-c "$1" -p "$IPERF_PORT" -t "$SECS" -J) cpu0 drops0 mbps
    [ "$2" = down ] && args+=(-R)
    [ -n "$RATE" ] && args+=(-b "$RATE")
    cpu0=$(tree_cpu_us "$3"); drops0=$(udp_rcvbuf_errors "$NS_CLIENT")
    mbps=$(ip netns exec "$NS_CLIENT" iperf3 "${args[@]}" 2>/dev/null | jq '.end.sum_received.bits_per_second // empty | . / 1e6 | . * 10 | round / 10' 2>/dev/null || true)
    echo "${mbps:-null} $(( $(tree_cpu_us "$3") - cpu0 )) $(( $(udp_rcvbuf_errors "$NS_CLIENT") - drops0 ))"
}

for mode in $MODES; do
    connect_both "$mode"
    log "$mode: both sessions up"
    for ((round = 1; round <= ROUNDS; round++)); do
        for dir in $DIRS; do
            if ((round % 2)); then g=$(run_of "$GW_TARGET" "$dir" "$GW_PID_OF_GW"); o=$(run_of "$OCSERV_TARGET" "$dir" "$GW_PID_OF_OCSERV")
            else o=$(run_of "$OCSERV_TARGET" "$dir" "$GW_PID_OF_OCSERV"); g=$(run_of "$GW_TARGET" "$dir" "$GW_PID_OF_GW"); fi
            read -r g g_cpu g_drops <<< "$g"; read -r o o_cpu o_drops <<< "$o"
            sample --arg mode "$mode" --arg dir "$dir" --argjson round "$round" --argjson gw "$g" --argjson ocserv "$o" \
                --argjson gw_cpu "$g_cpu" --argjson ocserv_cpu "$o_cpu" --argjson gw_drops "$g_drops" --argjson ocserv_drops "$o_drops" \
                '{kind: "throughput", mode: $mode, dir: $dir, round: $round, gw_mbps: $gw, ocserv_mbps: $ocserv,
                  gw_cpu_us: $gw_cpu, ocserv_cpu_us: $ocserv_cpu, gw_client_udp_drops: $gw_drops, ocserv_client_udp_drops: $ocserv_drops}'
            log "$mode $dir round $round: gw $g Mbit/s ($(( g_cpu / 1000 )) ms CPU, $g_drops lost at the client), ocserv $o ($(( o_cpu / 1000 )) ms, $o_drops)"
        done
    done
    disconnect_both
done

cp "$SAMPLES" "$out/throughput-samples.jsonl"
jq -rs --arg secs "$SECS" --arg rate "$RATE" '
    def med: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    def r1: . * 10 | round / 10;
    def r2: . * 100 | round / 100;
    def per_cpu(mbps; cpu): if cpu > 0 then mbps * ($secs | tonumber) / (cpu / 1e6) else null end;
    map(select(.kind == "throughput" and .gw_mbps != null and .ocserv_mbps != null and .ocserv_mbps > 0)) | group_by([.mode, .dir])[]
    | (map(.gw_mbps / .ocserv_mbps)) as $ratios
    | (map(per_cpu(.gw_mbps; .gw_cpu_us)) | med) as $gpc | (map(per_cpu(.ocserv_mbps; .ocserv_cpu_us)) | med) as $opc
    | "\(.[0].mode) \(.[0].dir): \(length) rounds of \($secs) s\(if $rate != "" then " held to \($rate)bit/s" else "" end), alternated; median of the rounds: gw \(map(.gw_mbps) | med | r1) Mbit/s, ocserv \(map(.ocserv_mbps) | med | r1); gw/ocserv per round \($ratios | map(r2) | join(" ")), median \($ratios | med | r2) \(if $rate != "" then "(both held to one rate: not the throughput goal)" else "(goal: at least 1.2)" end); Mbit per gateway CPU-second gw \($gpc | r1), ocserv \($opc | r1), ratio \(if $opc then ($gpc / $opc | r2) else null end); datagrams lost at the client, median a run: gw \(map(.gw_client_udp_drops) | med), ocserv \(map(.ocserv_client_udp_drops) | med)"
' "$SAMPLES" | tee "$out/throughput-compare.txt"
echo "results in $out (logs in $WORK)"
