# Sourced by rtt-side-by-side.sh and throughput-side-by-side.sh: gw and Debian's ocserv started at
# once in the harness's gateway namespace (gw on $GW_PORT, ocserv on OCSERV_PORT with its own
# address pool and its own LAN address), and one openconnect session with each, each routing only
# its own gateway's LAN address. Expects repo, bench and out set; leaves GW_PID_OF_GW,
# GW_PID_OF_OCSERV, WORK and SAMPLES set. A script that starts more (an iperf3 server) stops it in
# its own side_by_side_stop_extra, which cleanup calls first.
OCSERV_PORT=${OCSERV_PORT:-4443}
BENCH_DIR=$bench
. "$bench/lib.sh"
. "$repo/scripts/bench/gw-under-bench.sh"

# The anchor's own ocserv configuration (its defaults and gw_prepare), not a copy of it.
ocserv_prepare_source=$(sed -n -e '/^OCSERV_[A-Z_]*=\${/p' -e '/^gw_prepare() {/,/^}/p' "$bench/anchor-ocserv.sh")
[ -n "$ocserv_prepare_source" ] || die "no gw_prepare in $bench/anchor-ocserv.sh"

GW_TARGET=$LAN_ADDR
OCSERV_TARGET=${LAN_ADDR%.*}.3
OCSERV_POOL_NET=10.78.0.0
GW_IF=${BENCH_PREFIX}rg
OCSERV_IF=${BENCH_PREFIX}ro
GW_PID_OF_GW="" GW_PID_OF_OCSERV="" GW_CLIENT="" OCSERV_CLIENT=""

# A thread that ends between two readings takes its time with it (a runtime's compiler or
# collector thread, say), so one round may read low: the summary takes the median of the rounds.
tree_cpu_us() {   # pid: the CPU time its process tree has used so far, every live thread (schedstat), in µs
    local pid task ns total=0
    for pid in $(tree_pids "$1"); do
        for task in /proc/"$pid"/task/*/schedstat; do
            { read -r ns _ < "$task"; } 2>/dev/null && total=$((total + ns))
        done
    done
    echo $((total / 1000))
}

connect_both() {    # mode: one session with each gateway, each routing only its own LAN address
    local mode=$1 extra=()
    [ "$mode" = cstp ] && extra=(--no-dtls)
    oc_start "$GW_IF" "$GW_TARGET/32" "${extra[@]}"; GW_CLIENT=$OC_PID
    GW_PORT=$OCSERV_PORT oc_start "$OCSERV_IF" "$OCSERV_TARGET/32" "${extra[@]}"; OCSERV_CLIENT=$OC_PID
    local pair
    for pair in "$GW_CLIENT $GW_IF $GW_TARGET" "$OCSERV_CLIENT $OCSERV_IF $OCSERV_TARGET"; do
        set -- $pair
        ip netns exec "$NS_CLIENT" timeout "$CONNECT_TIMEOUT" bash -c '
            until ping -n -c1 -W0.5 -q "$0" >/dev/null 2>&1; do kill -0 "$1" 2>/dev/null || exit 1; sleep 0.02; done' "$3" "$1" ||
            { tail -5 "$WORK/oc-$2.log" >&2; die "$2: no ping to $3 through its tunnel"; }
        if [ "$mode" = dtls ] && ! wait_log "$WORK/oc-$2.log" 'Established DTLS connection' "$DTLS_WAIT"; then
            die "$2: DTLS not established (see $WORK/oc-$2.log)"
        fi
    done
}

disconnect_both() {
    stop_pid "$GW_CLIENT" INT 5; stop_pid "$OCSERV_CLIENT" INT 5
    GW_CLIENT="" OCSERV_CLIENT=""
    sleep 0.5
}

cleanup() {
    set +e
    local p
    declare -F side_by_side_stop_extra >/dev/null && side_by_side_stop_extra
    for p in "${ALL_OC_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && stop_pid "$p" INT 3; done
    [ -n "$GW_PID_OF_GW" ] && stop_pid "$GW_PID_OF_GW" TERM 10
    [ -n "$GW_PID_OF_OCSERV" ] && stop_pid "$GW_PID_OF_OCSERV" TERM 10
    ip -n "$NS_LAN" addr del "$OCSERV_TARGET/$IN_PLEN" dev "$IF_LAN" 2>/dev/null
    if [ "$CREATED_NETNS" = 1 ]; then "$bench/netns-down.sh" >&2; fi
}

[ "$(id -u)" = 0 ] || die "run as root (netns, TUN)"
need ip ss openssl openconnect ocserv jq ping timeout
trap cleanup EXIT
trap 'exit 130' INT TERM
if ! ip netns list | awk '{print $1}' | grep -qx "$NS_GW"; then "$bench/netns-up.sh" >&2; CREATED_NETNS=1; fi
WORK=$(mktemp -d "/tmp/${BENCH_PREFIX}work.XXXXXX"); chmod 755 "$WORK"
SAMPLES=$WORK/samples.jsonl; : > "$SAMPLES"
make_credentials
ip -n "$NS_LAN" addr add "$OCSERV_TARGET/$IN_PLEN" dev "$IF_LAN" 2>/dev/null || true

# ocserv first, on its own port and pool; gw_start waits for its listener and sets GW_PID.
eval "$ocserv_prepare_source"
gw_port=$GW_PORT
GW_PORT=$OCSERV_PORT VPN_POOL_NET=$OCSERV_POOL_NET gw_prepare
GW_PORT=$OCSERV_PORT
gw_start
GW_PID_OF_OCSERV=$GW_PID
mv "$WORK/gw.log" "$WORK/ocserv.log"
GW_PORT=$gw_port
bash -c "$GW_PREPARE_CMD"
GW_CMD=$GW_RUN_CMD
gw_start
GW_PID_OF_GW=$GW_PID
GW_PID=""

