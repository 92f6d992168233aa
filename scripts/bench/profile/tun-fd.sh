# Sourced by ping-stages.sh and ping-stages-side-by-side.sh (after the harness's lib.sh, for die).
tun_fd_of() {   # pid: the descriptor it holds open on /dev/net/tun (one queue: gw's single process, an ocserv worker)
    local fd
    for fd in /proc/"$1"/fd/*; do [ "$(readlink "$fd")" = /dev/net/tun ] && { basename "$fd"; return; }; done
    die "no /dev/net/tun descriptor in $1"
}
