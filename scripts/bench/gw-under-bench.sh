# Sourced by the scripts that measure gw with the shared bench harness (vs-ocserv.sh,
# multi-client.sh): how gw is provisioned and started there, so every bench runs the same gateway.
# Needs: repo (the repository's root). Knobs: GW_RULES (a policy of that many access rules for the
# bench group), GW_FLAGS (more `gw serve` flags), GW_RUNTIME=deno (serve with the esbuild bundle
# under the repository's Deno, `deno run -A dist/gw.mjs`, instead of the compiled binary). Sets GW_BIN, GW_PREPARE_CMD and GW_RUN_CMD: command
# strings that the harness expands itself ($WORK, $VPN_USER, ...), hence the single quotes inside.
GW_BIN="$repo/dist/gw"
{ [ -x "$GW_BIN" ] && [ -f "$repo/dist/gw.mjs" ]; } || (cd "$repo" && ./node_modules/.bin/bun build/build.ts)
case "${GW_RUNTIME:-bun}" in
  bun) GW_SERVE="'$GW_BIN'" ;;
  deno) GW_SERVE="'$repo/node_modules/.bin/deno' run -A '$repo/dist/gw.mjs'" ;;
  *) echo "GW_RUNTIME must be bun or deno, not ${GW_RUNTIME}" >&2; exit 2 ;;
esac
gw_rules=""
if [ -n "${GW_RULES:-}" ]; then
  gw_rules=" && '$repo/node_modules/.bin/bun' '$repo/scripts/bench/group-rules.ts' \"\$WORK/gw-data\" bench $GW_RULES \"\$LAN_NET\""
fi
GW_PREPARE_CMD="'$GW_BIN' init --data-dir \"\$WORK/gw-data\" && '$GW_BIN' group add bench --route \"\$LAN_NET\" --data-dir \"\$WORK/gw-data\"$gw_rules && printf '%s\n' \"\$VPN_PASS\" | '$GW_BIN' user add \"\$VPN_USER\" --group bench --password-stdin --data-dir \"\$WORK/gw-data\""
# Every client logs in as one user, so sessions per user are unlimited, as the ocserv anchor sets max-same-clients = 0.
GW_RUN_CMD="$GW_SERVE serve --data-dir \"\$WORK/gw-data\" --listen \"\$GW_OUT_ADDR\" --port \"\$GW_PORT\" --cert \"\$BENCH_CERT\" --key \"\$BENCH_KEY\" --pool \"\$VPN_POOL_CIDR\" --tun vpnb-gw0 --api-listen 127.0.0.1:8443 --max-sessions-per-user 0 ${GW_FLAGS:-}"
