#!/usr/bin/env bash
# Several openconnect clients moving data at once (issue 13: "with 4 clients moving data at once,
# aggregate throughput at least 1.0x ocserv"): Debian's ocserv, then gw, measured by the same code in
# one run, on the shared bench harness's namespaces, client side and ocserv configuration. Each
# client gets its own LAN address and iperf3 server; all N iperf3 runs start together. Prints, per
# channel and direction, the sum of what the N receivers got, the gateway's CPU cores and the host's
# busy cores, then the gw/ocserv ratios. Not a test: it prints figures.
#   usage: scripts/bench/multi-client.sh [OUT_DIR]     (root; apt-get install ocserv openconnect iperf3 jq)
# Knobs: CLIENTS (4), REPS (2), IPERF_SECS (10), MODES ("dtls cstp"), SKIP_OCSERV=1, GW_FLAGS,
# GW_RULES (as in vs-ocserv.sh), BENCH_DIR (default ../shared/bench beside the repo).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bench=${BENCH_DIR:-$repo/../shared/bench}
out=${1:-$(mktemp -d /tmp/gw-multi.XXXXXX)}
mkdir -p "$out"
[ -f "$bench/lib.sh" ] && [ -f "$bench/anchor-ocserv.sh" ] || { echo "bench harness not found at $bench (set BENCH_DIR)" >&2; exit 1; }
CLIENTS=${CLIENTS:-4}
REPS=${REPS:-2}
MODES=${MODES:-dtls cstp}
BENCH_DIR=$bench
. "$bench/lib.sh"
. "$repo/scripts/bench/gw-under-bench.sh"

# The anchor's own ocserv configuration (its defaults and gw_prepare), not a copy of it.
ocserv_prepare_source=$(sed -n -e '/^OCSERV_[A-Z_]*=\${/p' -e '/^gw_prepare() {/,/^}/p' "$bench/anchor-ocserv.sh")
[ -n "$ocserv_prepare_source" ] || die "no gw_prepare in $bench/anchor-ocserv.sh"

client_addr() { echo "${LAN_ADDR%.*}.$((10 + $1))"; }   # LAN address that client $1 sends to
client_port() { echo $((5300 + $1)); }
client_if() { echo "${BENCH_PREFIX}a$1"; }
# Each client from its own outer address, as separate machines would be (gw --workers N places a
# client by its address): 203.0.113.20, .21, ... in order, whatever worker each one steers to.
client_src() { echo "${CLIENT_ADDR%.*}.$((19 + $1))"; }

lan_up() {      # one LAN address and iperf3 server per client
    local i
    IPERF_PIDS=()
    for ((i = 1; i <= CLIENTS; i++)); do
        ip -n "$NS_LAN" addr add "$(client_addr "$i")/$IN_PLEN" dev "$IF_LAN" 2>/dev/null || true
        ip netns exec "$NS_LAN" iperf3 -s -p "$(client_port "$i")" > "$WORK/iperf-server-$i.log" 2>&1 &
        IPERF_PIDS+=("$!")
    done
    sleep 0.3
}

lan_down() {
    local p i
    for p in "${IPERF_PIDS[@]}"; do stop_pid "$p" TERM 3; done
    for ((i = 1; i <= CLIENTS; i++)); do ip -n "$NS_LAN" addr del "$(client_addr "$i")/$IN_PLEN" dev "$IF_LAN" 2>/dev/null || true; done
}

clients_up() {  # mode: CLIENTS sessions, each routing only its own LAN address through its tunnel
    local mode=$1 i extra=() target ok
    [ "$mode" = cstp ] && extra=(--no-dtls)
    CLIENT_PIDS=()
    for ((i = 1; i <= CLIENTS; i++)); do
        # A connection keeps the source its route gave it when it opened (TLS and the DTLS socket).
        ip -n "$NS_CLIENT" addr add "$(client_src "$i")/32" dev "$IF_CLIENT" 2>/dev/null || true
        ip -n "$NS_CLIENT" route replace "$GW_OUT_ADDR/32" dev "$IF_CLIENT" src "$(client_src "$i")"
        oc_start "$(client_if "$i")" "$(client_addr "$i")/32" "${extra[@]}"
        CLIENT_PIDS+=("$OC_PID")
        # The next client must not start before this one's TLS and DTLS sockets have their source.
        if [ "$mode" = dtls ]; then
            wait_log "$WORK/oc-$(client_if "$i").log" 'Established DTLS connection' "$DTLS_WAIT" || true
        else
            wait_log "$WORK/oc-$(client_if "$i").log" 'Got CONNECT response' "$CONNECT_TIMEOUT" || true
        fi
    done
    for ((i = 1; i <= CLIENTS; i++)); do
        target=$(client_addr "$i")
        ok=$(ip netns exec "$NS_CLIENT" timeout "$CONNECT_TIMEOUT" bash -c '
            until ping -n -c1 -W0.5 -q "$0" >/dev/null 2>&1; do kill -0 "$1" 2>/dev/null || exit 1; sleep 0.02; done; echo yes' \
            "$target" "${CLIENT_PIDS[$((i - 1))]}") || true
        [ "$ok" = yes ] || { tail -5 "$WORK/oc-$(client_if "$i").log" >&2; die "client $i: no ping to $target through its tunnel"; }
        if [ "$mode" = dtls ] && ! wait_log "$WORK/oc-$(client_if "$i").log" 'Established DTLS connection' "$DTLS_WAIT"; then
            die "client $i: DTLS not established (see $WORK/oc-$(client_if "$i").log)"
        fi
    done
    sleep 0.5
}

clients_down() {
    local p
    for p in "${CLIENT_PIDS[@]}"; do kill -INT "$p" 2>/dev/null || true; done
    for p in "${CLIENT_PIDS[@]}"; do stop_pid "$p" INT 5; done
    sleep 0.5
}

run_together() {    # mode dir rep: N iperf3 clients started together; one sample with their sum
    local mode=$1 dir=$2 rep=$3 i pids=() args g0 g1 s0 s1 t0 wall_us sum
    g0=$(cpu_ticks "$GW_PID"); s0=$(sys_busy_ticks); t0=$(now_us)
    for ((i = 1; i <= CLIENTS; i++)); do
        args=(-c "$(client_addr "$i")" -p "$(client_port "$i")" -t "$IPERF_SECS" -J)
        [ "$dir" = down ] && args+=(-R)
        ip netns exec "$NS_CLIENT" iperf3 "${args[@]}" > "$WORK/iperf-$mode-$dir-$rep-$i.json" 2>&1 &
        pids+=("$!")
    done
    for p in "${pids[@]}"; do wait "$p" || true; done
    wall_us=$(( $(now_us) - t0 )); g1=$(cpu_ticks "$GW_PID"); s1=$(sys_busy_ticks)
    # A client whose iperf3 failed counts 0 and is reported: the sum must not hide it.
    sum=$(for ((i = 1; i <= CLIENTS; i++)); do
        jq -c '{mbps: ((.end.sum_received.bits_per_second // 0) / 1e6), error: .error}' "$WORK/iperf-$mode-$dir-$rep-$i.json" 2>/dev/null ||
            echo '{"mbps": 0, "error": "iperf3 output unreadable"}'
    done | jq -cs '{total_mbps: (map(.mbps) | add), per_client_mbps: map(.mbps), errors: (map(.error // empty))}')
    sample --arg mode "$mode" --arg dir "$dir" --argjson rep "$rep" --argjson wall_us "$wall_us" \
        --argjson g "$((g1 - g0))" --argjson s "$((s1 - s0))" --argjson hz "$CLK_TCK" --argjson sum "$sum" \
        '{kind: "together", mode: $mode, dir: $dir, rep: $rep} + $sum +
         {gw_cpu_cores: ($g / $hz / ($wall_us / 1e6)), host_busy_cores: ($s / $hz / ($wall_us / 1e6))}'
    log "$mode $dir rep $rep: $(jq -r '"\(.total_mbps | round) Mbit/s in all (\(.per_client_mbps | map(round) | join(" + "))), gw \(.gw_cpu_cores * 100 | round / 100) cores, host \(.host_busy_cores * 100 | round / 100)"' <<<"$(tail -1 "$SAMPLES")")"
}

measure() {     # name out.json: the bench for the gateway that GW_NAME/GW_CMD/gw_prepare describe
    local name=$1 json=$2 mode rep
    WORK=$(mktemp -d "/tmp/${BENCH_PREFIX}work.XXXXXX"); chmod 755 "$WORK"
    SAMPLES=$WORK/samples.jsonl; : > "$SAMPLES"
    make_credentials
    gw_prepare
    gw_start
    lan_up
    for ((rep = 1; rep <= REPS; rep++)); do
        for mode in $MODES; do
            clients_up "$mode"
            run_together "$mode" up "$rep"
            run_together "$mode" down "$rep"
            clients_down
        done
    done
    lan_down
    gw_stop
    jq -s --arg name "$name" --argjson clients "$CLIENTS" --arg work "$WORK" '
        map(select(.kind == "together")) as $s
        | def med: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
        {gateway: $name, clients: $clients, work_dir: $work, samples: $s,
         summary: ($s | group_by(.mode + " " + .dir) | map({key: (.[0].mode + " " + .[0].dir),
            value: {total_mbps: (map(.total_mbps) | med), gw_cpu_cores: (map(.gw_cpu_cores) | med),
                    host_busy_cores: (map(.host_busy_cores) | med), errors: (map(.errors[]) | unique)}}) | from_entries)}' \
        "$SAMPLES" > "$json"
    log "$name: results in $json (logs in $WORK)"
}

cleanup() {
    set +e
    local p
    for p in "${ALL_OC_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && stop_pid "$p" INT 3; done
    for p in "${IPERF_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && stop_pid "$p" TERM 3; done
    gw_stop
    if [ "$CREATED_NETNS" = 1 ]; then "$bench/netns-down.sh" >&2; fi
}

[ "$(id -u)" = 0 ] || die "run as root (netns, TUN)"
need ip ss openssl openconnect iperf3 jq ping timeout
IPERF_PIDS=() CLIENT_PIDS=()
trap cleanup EXIT
trap 'exit 130' INT TERM
if ! ip netns list | awk '{print $1}' | grep -qx "$NS_GW"; then "$bench/netns-up.sh" >&2; CREATED_NETNS=1; fi

if [ -z "${SKIP_OCSERV:-}" ]; then
    eval "$ocserv_prepare_source"
    GW_NAME=ocserv
    measure ocserv "$out/multi-ocserv.json"
fi
gw_prepare() { bash -c "$GW_PREPARE_CMD"; }
GW_NAME=gw GW_CMD=$GW_RUN_CMD
measure gw "$out/multi-gw.json"

# The table: each figure for both gateways and the gw/ocserv ratio.
ocserv_json=null
[ -n "${SKIP_OCSERV:-}" ] || ocserv_json=$(cat "$out/multi-ocserv.json")
jq -rn --slurpfile g "$out/multi-gw.json" --argjson o "$ocserv_json" --argjson n "$CLIENTS" '
    ($g[0].summary) as $gs | ($o.summary // {}) as $os
    | def r(a; b): if a == null or b == null or b == 0 then "-" else (a / b * 100 | round / 100 | tostring) end;
      def f(x): if x == null then "-" else (x * 100 | round / 100 | tostring) end;
    "\($n) clients at once                    ocserv         gw   gw/ocserv",
    ($gs | keys[] as $k
      | ("\($k): Mbit/s in all" | .[0:36]) as $name
      | "\($name + (" " * (36 - ($name | length))))\(f($os[$k].total_mbps) | .[0:10] | " " * (10 - length) + .) \(f($gs[$k].total_mbps) | " " * (10 - length) + .) \(r($gs[$k].total_mbps; $os[$k].total_mbps) | " " * (11 - length) + .)",
        "  gw CPU cores / host busy cores      \(f($os[$k].gw_cpu_cores))/\(f($os[$k].host_busy_cores))   \(f($gs[$k].gw_cpu_cores))/\(f($gs[$k].host_busy_cores))",
        (($gs[$k].errors + ($os[$k].errors // [])) | if length > 0 then "  iperf3 errors: \(join("; "))" else empty end))
' | tee "$out/multi-compare.txt"
echo "results in $out"
