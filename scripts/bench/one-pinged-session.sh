# Sourced by the diagnoses that watch gw serve one session's pings (ping-profile.sh,
# ping-stages.sh): the shared harness's namespaces, gw started as the benches start it, one
# openconnect through `mode` (dtls or cstp), warmed with a flood of WARM pings (default 3000).
# Needs: repo, BENCH_DIR, mode. GW_ENV, when set, goes before gw's command as `env GW_ENV`.
# Leaves GW_PID, OC_PID, NS_CLIENT and LAN_ADDR set; everything stops at the script's exit.
[ -f "$BENCH_DIR/lib.sh" ] || { echo "bench harness not found at $BENCH_DIR (set BENCH_DIR)" >&2; exit 1; }
. "$BENCH_DIR/lib.sh"
. "$repo/scripts/bench/gw-under-bench.sh"
GW_NAME=gw
gw_prepare() { bash -c "$GW_PREPARE_CMD"; GW_CMD="${GW_ENV:+env $GW_ENV }$GW_RUN_CMD"; }
WORK=$(mktemp -d "/tmp/${BENCH_PREFIX}work.XXXXXX"); chmod 755 "$WORK"
SAMPLES=$WORK/samples.jsonl; : > "$SAMPLES"
trap bench_cleanup EXIT
if ! ip netns list | awk '{print $1}' | grep -qx "$NS_GW"; then "$BENCH_DIR/netns-up.sh" >&2; CREATED_NETNS=1; fi
make_credentials; gw_prepare; gw_start
session_flags=(); [ "$mode" = cstp ] && session_flags=(--no-dtls)
oc_start "$OC_IF" "$LAN_NET" "${session_flags[@]}"
wait_ping "$OC_PID" 20 || die "the tunnel did not pass a ping"
[ "$mode" = dtls ] && { wait_log "$WORK/oc-$OC_IF.log" 'Established DTLS connection' 5 || die "DTLS was not established"; }
ip netns exec "$NS_CLIENT" ping -q -f -c "${WARM:-3000}" "$LAN_ADDR" > /dev/null 2>&1 || true
