#!/usr/bin/env bash
# Where the tunnel's TCP runs lost packets, and how busy the client and the host were, per gateway
# (the harness's iperf samples, median over reps). A throughput figure alone does not say whether
# the gateway, the client or the loss pattern held it back: e.g. a download that drops datagrams at
# openconnect's UDP receive buffer while the client uses half a core and the host has a core idle
# is bound by bursts reaching the client, not by CPU.
#   usage: scripts/bench/where-lost.sh RESULT.json [RESULT.json ...]   (the harness's output files)
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 RESULT.json [RESULT.json ...]" >&2; exit 2; }
printf '%-8s %-5s %-5s %8s %9s %11s %11s %11s %11s %7s %7s %6s\n' \
    gateway mode dir Mbit/s retrans "udp@client" "udp@gw" "tunq@client" "tunq@gw" gw_cpu client busy
for file in "$@"; do
    name=$(basename "$file" .json)
    jq -r --arg name "$name" '
        def median: sort | if length == 0 then null else .[(length / 2 | floor)] end;
        def r1: if . == null then "-" else (. * 10 | round / 10 | tostring) end;
        def r2: if . == null then "-" else (. * 100 | round / 100 | tostring) end;
        [.. | objects | select(.kind? == "iperf" and .error == null and .mode != "plain")]
        | group_by([.mode, .dir])[]
        | . as $runs
        | [$name, $runs[0].mode, $runs[0].dir,
           ([$runs[].mbps] | median | r1), ([$runs[].retransmits] | median | r1),
           ([$runs[].udp_rcvbuf_drops_client] | median | r1), ([$runs[].udp_rcvbuf_drops_gw] | median | r1),
           ([$runs[].link_qdisc_drops_client] | median | r1), ([$runs[].link_qdisc_drops_gw] | median | r1),
           ([$runs[] | .gw_cpu_s / .wall_s] | median | r2), ([$runs[] | .client_cpu_s / .wall_s] | median | r2),
           ([$runs[] | .sys_busy_s / .wall_s] | median | r2)]
        | @tsv' "$file"
done | awk -F'\t' '{ printf "%-8s %-5s %-5s %8s %9s %11s %11s %11s %11s %7s %7s %6s\n", $1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12 }'
echo "udp@: datagrams dropped at that side's full UDP receive buffer; tunq@: packets dropped at that side's tunnel device queue;"
echo "gw_cpu, client: cores used by the gateway and by openconnect; busy: the host's busy cores (of $(nproc))"
