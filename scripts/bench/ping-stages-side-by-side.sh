#!/usr/bin/env bash
# Where a ping's time goes in gw and in ocserv, side by side: both gateways running at once as in
# rtt-side-by-side.sh (side-by-side/both-gateways.sh), one openconnect session with each, and
# bpftrace (profile/ping-stages.bt) on each gateway's serving thread in turn (gw's main thread,
# the ocserv worker of its session) while pings go through its tunnel every INTERVAL seconds.
# Per stage, the median over the rounds of each gateway's average µs a ping on a CPU: the wake-up
# to the client's record read (a), that read to the TUN write (b: decryption, checks, routing),
# the TUN write (c: on this harness the LAN's echo comes back inside it), the write to the reply's
# read (d), that read to the send (e: sealing), the send (f), the send to the next wait (g, after
# the reply left), and the time another task held the CPU inside those stages (openconnect,
# woken by the send, often preempts the sender there), a ping. a, b, d and e are each gateway's
# own work on the way of the ping; c and f are mostly the kernel's. A diagnosis, not a
# figure for the goals (bpftrace adds about a µs a probe).
#   usage: scripts/bench/ping-stages-side-by-side.sh [OUT_DIR]   (root; bpftrace, ocserv, openconnect, jq)
# Knobs: ROUNDS (3), PINGS (300), INTERVAL (0.01), WARM (3000), MODES ("dtls cstp"), OCSERV_PORT
# (4443), GW_FLAGS (as in vs-ocserv.sh; without --workers, gw's main thread serves), BENCH_DIR.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bench=${BENCH_DIR:-$repo/../shared/bench}
out=${1:-$(mktemp -d /tmp/gw-ping-stages-sbs.XXXXXX)}
mkdir -p "$out"
[ -f "$bench/lib.sh" ] && [ -f "$bench/anchor-ocserv.sh" ] || { echo "bench harness not found at $bench (set BENCH_DIR)" >&2; exit 1; }
command -v bpftrace >/dev/null || { echo "bpftrace is needed (apt-get install bpftrace)" >&2; exit 1; }
ROUNDS=${ROUNDS:-3}
PINGS=${PINGS:-300}
INTERVAL=${INTERVAL:-0.01}
WARM=${WARM:-3000}
MODES=${MODES:-dtls cstp}
BT_PID=""
side_by_side_stop_extra() { [ -n "$BT_PID" ] && kill -INT "$BT_PID" 2>/dev/null; BT_PID=""; }
. "$repo/scripts/bench/side-by-side/both-gateways.sh"

. "$repo/scripts/bench/profile/tun-fd.sh"

ocserv_worker() {   # the ocserv worker serving the one session (its comm is ocserv-worker)
    local pid
    for pid in $(tree_pids "$GW_PID_OF_OCSERV"); do
        [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = ocserv-worker ] && { echo "$pid"; return; }
    done
    die "no ocserv-worker under $GW_PID_OF_OCSERV"
}

stages_of() {   # gateway tid target mode round: bpftrace on tid while PINGS pings go to target; one sample
    local gateway=$1 tid=$2 target=$3 mode=$4 round=$5 file tun_fd
    file=$out/$mode-$round-$gateway.txt
    tun_fd=$(tun_fd_of "$tid")
    bpftrace "$repo/scripts/bench/profile/ping-stages.bt" "$tid" "$tun_fd" > "$file" 2> "$file.log" &
    BT_PID=$!
    sleep 2 # bpftrace attaches its probes
    ip netns exec "$NS_CLIENT" ping -n -q -c "$PINGS" -i "$INTERVAL" -W1 "$target" > /dev/null 2>&1 || true
    kill -INT "$BT_PID" 2> /dev/null || true
    wait "$BT_PID" || true
    BT_PID=""
    # "@b_read_to_tun_write: count 300, average 47, total 14100" and "@h_off_cpu[f]: count 113, average 42, total 4746"
    awk -v gateway="$gateway" -v mode="$mode" -v round="$round" -v pings="$PINGS" '
        /^@[a-g]_/ { gsub(/[@:,]/, ""); split($1, k, "_"); stage[k[1]] = $5 }
        /^@h_off_cpu/ { gsub(/[@:,]/, ""); off += $7 }
        END {
            printf "{\"kind\":\"stages\",\"gateway\":\"%s\",\"mode\":\"%s\",\"round\":%d,\"off_cpu_us_per_ping\":%.1f", gateway, mode, round, off / pings
            for (s in stage) printf ",\"%s\":%s", s, stage[s]
            print "}"
        }' "$file" >> "$SAMPLES"
    log "$mode round $round, $gateway: $(tail -1 "$SAMPLES")"
}

for mode in $MODES; do
    connect_both "$mode"
    log "$mode: both sessions up; warming each with a flood of $WARM pings"
    ip netns exec "$NS_CLIENT" ping -q -f -c "$WARM" "$GW_TARGET" > /dev/null 2>&1 || true
    ip netns exec "$NS_CLIENT" ping -q -f -c "$WARM" "$OCSERV_TARGET" > /dev/null 2>&1 || true
    worker=$(ocserv_worker)
    for ((round = 1; round <= ROUNDS; round++)); do
        if ((round % 2)); then order="gw ocserv"; else order="ocserv gw"; fi
        for gateway in $order; do
            if [ "$gateway" = gw ]; then stages_of gw "$GW_PID_OF_GW" "$GW_TARGET" "$mode" "$round"
            else stages_of ocserv "$worker" "$OCSERV_TARGET" "$mode" "$round"; fi
        done
    done
    disconnect_both
done

cp "$SAMPLES" "$out/stages-samples.jsonl"
jq -rs --arg interval "$INTERVAL" '
    def med: map(select(. != null)) | sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    def pad($n): if $n > 0 then " " * $n else "" end;
    def names: {a: "wake-up to the record read", b: "read to TUN write", c: "TUN write", d: "write to reply read", e: "reply read to send", f: "send", g: "send to next wait", off_cpu_us_per_ping: "off a CPU (others ran)"};
    map(select(.kind == "stages")) | group_by(.mode)[] | . as $all
    | "\($all[0].mode), a ping every \($interval) s, median of \($all | map(.round) | max) rounds (µs a ping):",
      (["a", "b", "c", "d", "e", "f", "g", "off_cpu_us_per_ping"][] as $s
       | ($all | map(select(.gateway == "gw")) | map(.[$s]) | med) as $g
       | ($all | map(select(.gateway == "ocserv")) | map(.[$s]) | med) as $o
       | "  \(if $s | length == 1 then $s + " " else "  " end)\(names[$s])\(pad(28 - (names[$s] | length)))  gw \($g)\(pad(6 - ($g | tostring | length)))  ocserv \($o)"),
      (["a", "b", "d", "e"] as $own
       | ($own | map(. as $s | $all | map(select(.gateway == "gw")) | map(.[$s]) | med) | add) as $g
       | ($own | map(. as $s | $all | map(select(.gateway == "ocserv")) | map(.[$s]) | med) | add) as $o
       | "  each gateway'"'"'s own work on the way (a+b+d+e): gw \($g), ocserv \($o)")
' "$SAMPLES" | tee "$out/stages-compare.txt"
echo "results in $out (logs in $WORK)"
