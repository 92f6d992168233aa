#!/usr/bin/env bash
# Where a ping's time goes on gw's serving thread, between its system calls: openconnect in the
# shared harness's network namespaces, a warm-up flood, then bpftrace on gw's main thread while
# pings go every INTERVAL seconds (profile/ping-stages.bt). Per ping, averages in µs of: the wake-up
# to the client's record being read; that read to the TUN write (decryption, checks, routing); the
# TUN write itself (the kernel forwards the packet and, on this harness, the LAN's echo comes back
# inside it); the write to the reply's read; that read to the send (routing, sealing); the send;
# the send to the next epoll call (the runtime's loop looking, or gw's own wait). Each counts gw's
# time on a CPU only; when another task took the CPU inside a stage (openconnect, woken by the send
# on the same CPU, preempts gw there in about a third of the pings), its time is printed apart as
# "off a CPU in" the stage's letter, with how many pings it hit. Through CSTP the
# TUN's hand-over (one epoll_ctl each way) falls inside the second and the fifth. Run it at
# INTERVAL=0.01 and 0.001 to see what cold caches cost.
# One gateway process (without --workers: the main thread serves). A diagnosis, not a figure for
# the goals (bpftrace adds about a µs a probe).
#   usage: scripts/bench/ping-stages.sh [dtls|cstp] [OUT_DIR]   (root; bpftrace, openconnect; the binary in dist/)
# Knobs: BENCH_DIR (default ../shared/bench beside the repo), PINGS (default 300), INTERVAL (default
# 0.01), WARM (flood pings first, default 3000).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
BENCH_DIR=${BENCH_DIR:-$repo/../shared/bench}
mode=${1:-dtls}
out=${2:-$(mktemp -d /tmp/gw-ping-stages.XXXXXX)}
case "$mode" in dtls | cstp) ;; *) echo "usage: $0 [dtls|cstp] [OUT_DIR]" >&2; exit 2 ;; esac
command -v bpftrace >/dev/null || { echo "bpftrace is needed (apt-get install bpftrace)" >&2; exit 1; }
mkdir -p "$out"
. "$repo/scripts/bench/one-pinged-session.sh"
. "$repo/scripts/bench/profile/tun-fd.sh"
tun_fd=$(tun_fd_of "$GW_PID")
pings=${PINGS:-300}
interval=${INTERVAL:-0.01}
bpftrace "$repo/scripts/bench/profile/ping-stages.bt" "$GW_PID" "$tun_fd" > "$out/stages.txt" 2> "$out/bpftrace.log" &
bt_pid=$!
sleep 2 # bpftrace attaches its probes
ping_out=$(ip netns exec "$NS_CLIENT" ping -n -c "$pings" -i "$interval" -W1 "$LAN_ADDR" 2>&1 || true)
kill -INT "$bt_pid" 2> /dev/null || true
wait "$bt_pid" || true
echo "$mode, a ping every $interval s: $(printf '%s\n' "$ping_out" | tail -1)"
awk '/^@/ { gsub(/[@:,]/, "")
    if ($1 ~ /^h_off_cpu/) { split($1, k, /[][]/); printf "  %-22s %6s µs, in %s pings\n", "off a CPU in " k[2], $5, $3 }
    else printf "  %-22s %6s µs a ping over %s\n", $1, $5, $3 }' "$out/stages.txt"
echo "results in $out"
