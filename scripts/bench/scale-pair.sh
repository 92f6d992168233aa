#!/usr/bin/env bash
# Memory per session and idle CPU at N sessions for ocserv, then gw, from the load generator
# (sessions-at-scale.ts --gateway ...: the same clients, users, pool and route, DTLS PSK, 30 s
# held), and gw/ocserv. Used by vs-ocserv.sh; not a test: it prints figures.
#   usage: scripts/bench/scale-pair.sh [N] [OUT_DIR]      (root; apt-get install ocserv)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-1000}
out=${2:-$(mktemp -d /tmp/gw-scale-pair.XXXXXX)}
mkdir -p "$out"
case $n in ''|*[!0-9]*) echo "scale-pair.sh: N must be a number of sessions, not '$n'" >&2; exit 2 ;; esac
for gateway in ocserv gw; do
  if ! "$repo/node_modules/.bin/bun" "$repo/scripts/bench/sessions-at-scale.ts" --sessions "$n" --dtls psk --hold 30 --gateway "$gateway" > "$out/$gateway.log" 2>&1; then
    echo "sessions-at-scale.ts --gateway $gateway failed (see $out/$gateway.log):" >&2
    tail -n 5 "$out/$gateway.log" >&2
    exit 1
  fi
done
# "  per session   RSS 27.9 KiB, PSS 27.4 KiB  ((at N - idle) / N)" and "... holding 4.69 % of a core"
pss() { sed -n 's/^  per session .*PSS \([0-9.]*\) KiB.*/\1/p' "$out/$1.log" | head -n 1; }
cpu() { sed -n 's/.*holding \([0-9.]*\) % of a core.*/\1/p' "$out/$1.log" | head -n 1; }
failures() { sed -n 's/^  failures *//p' "$out/$1.log" | head -n 1; }
op=$(pss ocserv) gp=$(pss gw) oc=$(cpu ocserv) gc=$(cpu gw)
for v in "$op" "$gp" "$oc" "$gc"; do
  [ -n "$v" ] || { echo "scale-pair.sh: a figure is missing from $out/ocserv.log or $out/gw.log" >&2; exit 1; }
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }'; }
echo "sessions at scale, $n with DTLS PSK from the load generator (sessions-at-scale.ts), 30 s held: PSS per session ocserv $op KiB, gw $gp KiB, gw/ocserv $(ratio "$gp" "$op"); CPU while holding ocserv $oc %, gw $gc % of a core, gw/ocserv $(ratio "$gc" "$oc"); failures ocserv $(failures ocserv), gw $(failures gw)"
