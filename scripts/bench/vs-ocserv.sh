#!/usr/bin/env bash
# gw against Debian's ocserv, measured by the shared bench harness (real openconnect in network
# namespaces: connect time, iperf3 throughput over DTLS and over CSTP, CPU, memory per session)
# in one run, then the B/A ratios (B = gw). Not a test: it prints figures.
#   usage: scripts/bench/vs-ocserv.sh [OUT_DIR]      (root; apt-get install ocserv openconnect iperf3 jq)
# Knobs: BENCH_DIR (default ../shared/bench beside the repo), GW_RULES (give the bench group a
# policy of that many access rules, e.g. 20; default: the starter rule), SKIP_OCSERV=1 (measure gw
# only, e.g. to compare GW_RULES runs with compare.sh), GW_FLAGS (more `gw serve` flags, e.g.
# --no-tun-offload; GW_NAME names that run's result) and the harness's own (REPS, CONNECTS,
# IPERF_SECS, N_CLIENTS, ...; see its README).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bench=${BENCH_DIR:-$repo/../shared/bench}
out=${1:-$(mktemp -d /tmp/gw-bench.XXXXXX)}
mkdir -p "$out"
[ -x "$bench/bench-gateway.sh" ] || { echo "bench harness not found at $bench (set BENCH_DIR)" >&2; exit 1; }
gw="$repo/dist/gw"
[ -x "$gw" ] || (cd "$repo" && ./node_modules/.bin/bun build/build.ts)

name=${GW_NAME:-gw}
rules=""
if [ -n "${GW_RULES:-}" ]; then
  name=gw-$GW_RULES-rules
  rules=" && '$repo/node_modules/.bin/bun' '$repo/scripts/bench/group-rules.ts' \"\$WORK/gw-data\" bench $GW_RULES \"\$LAN_NET\""
fi
[ -n "${SKIP_OCSERV:-}" ] || "$bench/anchor-ocserv.sh" "$out/ocserv.json"
# Single quotes: the harness expands $WORK, $VPN_USER, ... itself. Every client logs in as one user,
# so sessions per user are unlimited, as the ocserv anchor sets max-same-clients = 0.
"$bench/bench-gateway.sh" --name "$name" \
    --prepare "'$gw' init --data-dir \"\$WORK/gw-data\" && '$gw' group add bench --route \"\$LAN_NET\" --data-dir \"\$WORK/gw-data\"$rules && printf '%s\n' \"\$VPN_PASS\" | '$gw' user add \"\$VPN_USER\" --group bench --password-stdin --data-dir \"\$WORK/gw-data\"" \
    --cmd "'$gw' serve --data-dir \"\$WORK/gw-data\" --listen \"\$GW_OUT_ADDR\" --port \"\$GW_PORT\" --cert \"\$BENCH_CERT\" --key \"\$BENCH_KEY\" --pool \"\$VPN_POOL_CIDR\" --tun vpnb-gw0 --api-listen 127.0.0.1:8443 --max-sessions-per-user 0 ${GW_FLAGS:-}" \
    --version "'$gw' --version" \
    "$out/$name.json"
[ -n "${SKIP_OCSERV:-}" ] || "$bench/compare.sh" "$out/ocserv.json" "$out/$name.json" | tee "$out/compare.txt"
echo "results in $out"
