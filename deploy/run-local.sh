#!/usr/bin/env bash
# Runs a local Stoa cluster without containers: a private Redis, N server nodes on loopback
# ports and a Caddy load balancer in front of them, until Ctrl-C (or SIGTERM), then stops
# them all cleanly.
#
#   deploy/run-local.sh [N] [--redis-port P] [--balancer-port P] [--node-port P]
#                                    # N nodes, 3 by default
#
# Ports: each option, else its variable (STOA_REDIS_PORT, STOA_BALANCER_PORT,
# STOA_NODE_PORT), else a default: Redis the first free port from 16379, the balancer the
# first free one from 17878, the nodes any free ports. A port given is used as it is (the
# nodes on the given port and the ones after it, one each) and the script stops, saying
# which, when it is taken.
#
# Prints one line per process once everything listens, the balancer first:
#   balancer ws://127.0.0.1:PORT/ws pid PID   (players connect here: web page and `stoa`)
#   redis redis://127.0.0.1:PORT/ pid PID
#   node1 ws://127.0.0.1:PORT/ws pid PID
#   bot ws://127.0.0.1:PORT/ws,... pid PID     (a `stoa bot --serve`, levels 1-5, on node 1
#                                              and falling back on the other nodes)
#   analysis ws://127.0.0.1:PORT/ws,... pid PID   (a `stoa analyse --serve` worker, on the
#                                              last node and falling back on the others)
# The nodes take analysis workers' keys from a file of one key made for the run
# (`--analysis-keys`; the worker gets it as STOA_ANALYSIS_KEY): another worker of this
# cluster takes `STOA_ANALYSIS_KEY=$(cat <dir>/analysis-keys)` (KEEP_DIR=1 says the dir).
# The balancer (Caddy, `caddy run` on a Caddyfile generated in the temporary directory)
# spreads new connections over the nodes (least connections), checks each node's /health
# every second and stops sending anyone to a node that fails it or refuses a connection, so
# a node that dies is, for a player, just a reconnect. Players keep their identity across
# the nodes: tokens belong to the deployment (`welcome.deployment`, kept in this Redis).
# Any STOA_* variable (STOA_LEASE_MS, STOA_RATE_LIMIT, ...) reaches every node. The server
# binary is built in release mode unless STOA_SERVER_BIN names one, the client (for the bot)
# unless STOA_CLIENT_BIN does; STOA_BOT=0 starts no bot, STOA_ANALYSIS=0 no analysis
# worker, STOA_BALANCER=0 no balancer (then
# Caddy need not be installed; players connect to a node's address). Without Caddy (or the
# command STOA_CADDY_BIN names) the script says so and runs as with STOA_BALANCER=0;
# STOA_BALANCER=1 asks for the balancer and stops when Caddy is missing. Logs and Redis
# data live in a temporary directory that is removed at the end (kept with KEEP_DIR=1).
set -euo pipefail

usage="usage: $0 [N] [--redis-port PORT] [--balancer-port PORT] [--node-port PORT]   (N nodes, a number)"
n=3
redis_port=${STOA_REDIS_PORT:-}
balancer_port=${STOA_BALANCER_PORT:-}
node_port=${STOA_NODE_PORT:-}
while [ $# -gt 0 ]; do
    case $1 in
    --redis-port | --balancer-port | --node-port)
        [ $# -ge 2 ] || { echo "$1 needs a port; $usage" >&2; exit 2; }
        case $1 in
        --redis-port) redis_port=$2 ;;
        --balancer-port) balancer_port=$2 ;;
        --node-port) node_port=$2 ;;
        esac
        shift 2
        ;;
    --redis-port=* ) redis_port=${1#*=}; shift ;;
    --balancer-port=*) balancer_port=${1#*=}; shift ;;
    --node-port=*) node_port=${1#*=}; shift ;;
    -h | --help) echo "$usage"; exit 0 ;;
    *[!0-9]* | '') echo "$usage" >&2; exit 2 ;;
    *) n=$1; shift ;;
    esac
done
[ "$n" -ge 1 ] || { echo "N must be at least 1" >&2; exit 2; }
# A port given must be a number in 1-65535 (the nodes' last one too).
check_port() {
    case $2 in
    '' | *[!0-9]*) echo "$1 must be a port number (1-65535), not '$2'" >&2; exit 2 ;;
    esac
    if [ "$2" -lt 1 ] || [ "$2" -gt "$3" ]; then
        echo "$1 must be a port number (1-$3), not '$2'" >&2
        exit 2
    fi
}
[ -z "$redis_port" ] || check_port "the Redis port" "$redis_port" 65535
[ -z "$balancer_port" ] || check_port "the balancer port" "$balancer_port" 65535
[ -z "$node_port" ] || check_port "the first node's port" "$node_port" $((65536 - n))

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${STOA_SERVER_BIN:-}
if [ -z "$bin" ]; then
    cargo build --release --quiet -p stoa-server --manifest-path "$root/Cargo.toml"
    bin=$root/target/release/stoa-server
fi
bot_on=${STOA_BOT:-1}
analysis_on=${STOA_ANALYSIS:-1}
cli=${STOA_CLIENT_BIN:-}
if { [ "$bot_on" != 0 ] || [ "$analysis_on" != 0 ]; } && [ -z "$cli" ]; then
    cargo build --release --quiet -p stoa-cli --manifest-path "$root/Cargo.toml"
    cli=$root/target/release/stoa
fi
command -v redis-server >/dev/null || { echo "redis-server is not installed" >&2; exit 1; }
caddy=${STOA_CADDY_BIN:-caddy}
balancer_on=${STOA_BALANCER:-1}
if [ "$balancer_on" != 0 ] && ! command -v "$caddy" >/dev/null; then
    if [ -n "${STOA_BALANCER:-}" ]; then
        # Asked for by name: no silent fallback.
        echo "caddy is not installed (Debian: apt install caddy), and STOA_BALANCER=$STOA_BALANCER asks for the balancer; STOA_BALANCER=0 runs without it" >&2
        exit 1
    fi
    echo "note: caddy is not installed (Debian: apt install caddy): running without the balancer, as STOA_BALANCER=0 does; players connect to a node's address below (set STOA_BALANCER=0 to skip this note)" >&2
    balancer_on=0
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/stoa-local.XXXXXX")
pids=()
redis_pid=
bot_pid=
analysis_pid=
caddy_pid=

stop() {
    trap - INT TERM EXIT
    for pid in $bot_pid $analysis_pid; do
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    # Nodes next (each hands its games to Redis and closes its sockets), then Redis.
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    # The balancer after the nodes, so that their `shutdown` reaches the players through it.
    if [ -n "$caddy_pid" ]; then
        kill -TERM "$caddy_pid" 2>/dev/null || true
        wait "$caddy_pid" 2>/dev/null || true
    fi
    if [ -n "$redis_pid" ]; then
        kill -TERM "$redis_pid" 2>/dev/null || true
        wait "$redis_pid" 2>/dev/null || true
    fi
    if [ "${KEEP_DIR:-0}" = 1 ]; then echo "logs kept in $dir"; else rm -rf "$dir"; fi
    echo "stopped"
}
trap 'stop; exit 0' INT TERM
trap stop EXIT

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# A port given is used as it is: taken, the script stops and says which.
given_free() {
    port_free "$2" || { echo "$1 port $2 is already in use" >&2; exit 1; }
}
if [ -n "$redis_port" ]; then
    given_free "the Redis" "$redis_port"
fi
if [ -n "$node_port" ]; then
    for i in $(seq "$n"); do given_free "node$i's" $((node_port + i - 1)); done
fi
if [ "$balancer_on" != 0 ] && [ -n "$balancer_port" ]; then
    given_free "the balancer" "$balancer_port"
fi

# Starts Redis on port $1; true once *this* redis-server answers there. A free port can be
# taken between the check and the bind by another run of this script (the tests start
# several at once): then the other run's Redis would answer our ping, so the answer must
# name our process.
start_redis() {
    redis-server --port "$1" --bind 127.0.0.1 --dir "$dir" --appendonly yes \
        --appendfsync always --save '' --daemonize no >"$dir/redis.log" 2>&1 &
    redis_pid=$!
    for _ in $(seq 100); do
        kill -0 "$redis_pid" 2>/dev/null || break
        if redis-cli -p "$1" info server 2>/dev/null | grep -q "^process_id:$redis_pid"; then
            return 0
        fi
        sleep 0.1
    done
    kill -TERM "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
    redis_pid=
    return 1
}
if [ -n "$redis_port" ]; then
    port=$redis_port
    start_redis "$port" || { echo "Redis did not start on port $port:" >&2; cat "$dir/redis.log" >&2; exit 1; }
else
    port=16379
    until port_free "$port" && start_redis "$port"; do
        port=$((port + 1))
        [ "$port" -lt 16479 ] || { echo "no free port for Redis in 16379-16478" >&2; exit 1; }
    done
fi
url="redis://127.0.0.1:$port/"
lines=("redis $url pid $redis_pid")

# The analysis workers' key of this run (32 hex digits), in the file the nodes read.
od -An -tx1 -N16 /dev/urandom | tr -d ' \n' >"$dir/analysis-keys"
for i in $(seq "$n"); do
    listen=127.0.0.1:0
    [ -z "$node_port" ] || listen=127.0.0.1:$((node_port + i - 1))
    "$bin" --listen "$listen" --redis "$url" --cluster --node-id "node$i" \
        --analysis-keys "$dir/analysis-keys" \
        >"$dir/node$i.out" 2>"$dir/node$i.log" &
    pids+=($!)
done
addrs=()
for i in $(seq "$n"); do
    addr=
    for _ in $(seq 300); do
        addr=$(sed -n 's/^stoa-server listening on //p' "$dir/node$i.out" 2>/dev/null | head -n1)
        [ -n "$addr" ] && break
        if ! kill -0 "${pids[$((i - 1))]}" 2>/dev/null; then
            echo "node$i failed to start:" >&2
            cat "$dir/node$i.log" >&2
            exit 1
        fi
        sleep 0.1
    done
    [ -n "$addr" ] || { echo "node$i did not start in time" >&2; exit 1; }
    addrs+=("$addr")
    lines+=("node$i ws://$addr/ws pid ${pids[$((i - 1))]}")
done
# A token only this run's balancer answers with (a response header), to tell it from
# another run's Caddy that took the same free port first.
run_token=$(basename "$dir")
# Claims port $1 for this run against other runs of this script, until it exits. Caddy
# listens with SO_REUSEPORT, so two runs that both found the port free would both bind it
# and the kernel would share their players between the two clusters; a run holds an
# advisory lock per port it uses instead (flock, released by the kernel when the script
# ends, even by kill -9). Without flock (not Linux) every port counts as claimed.
claim_port() {
    command -v flock >/dev/null || return 0
    local locks="${TMPDIR:-/tmp}/stoa-run-local-ports"
    mkdir -p "$locks" 2>/dev/null || return 0
    exec {lock_fd}>>"$locks/$1.lock" || return 0
    flock -n "$lock_fd" && return 0
    exec {lock_fd}>&-
    return 1
}
# True once the balancer answering on port $1 is this run's.
balancer_is_ours() {
    local reply
    reply=$( (exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
        printf 'HEAD /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
        timeout 2 cat <&3) 2>/dev/null) || true
    case $reply in *"X-Stoa-Run: $run_token"*) return 0 ;; esac
    return 1
}
# Starts Caddy in front of the nodes on port $1; true once it answers there as this run's.
# With `quiet`, a Caddy that could not bind the port (another run took it) is not an error:
# the caller tries the next port.
start_balancer() {
    {
        echo "{"
        echo "	admin off"
        echo "}"
        # Any host name (127.0.0.1, localhost) on the port, on loopback only.
        echo "http://:$1 {"
        echo "	bind 127.0.0.1"
        echo "	header X-Stoa-Run $run_token"
        echo "	reverse_proxy ${addrs[*]} {"
        # New websockets go to the node with the fewest open.
        echo "		lb_policy least_conn"
        # A refused connection (a dead node) is retried on another node.
        echo "		lb_try_duration 5s"
        echo "		lb_try_interval 100ms"
        # A node that fails /health (dead, draining, cut off from Redis) gets nobody new;
        # one failed connection takes it out for 5 s at once, before the next check.
        echo "		health_uri /health"
        echo "		health_interval 1s"
        echo "		health_timeout 1s"
        echo "		health_status 200"
        echo "		fail_duration 5s"
        echo "		max_fails 1"
        echo "	}"
        echo "}"
    } >"$dir/Caddyfile"
    XDG_CONFIG_HOME="$dir/caddy" XDG_DATA_HOME="$dir/caddy" \
        "$caddy" run --adapter caddyfile --config "$dir/Caddyfile" >"$dir/caddy.log" 2>&1 &
    caddy_pid=$!
    for _ in $(seq 300); do
        balancer_is_ours "$1" && return 0
        kill -0 "$caddy_pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -TERM "$caddy_pid" 2>/dev/null || true
    wait "$caddy_pid" 2>/dev/null || true
    caddy_pid=
    [ "${2:-}" = quiet ] && return 1
    echo "the balancer (caddy) did not start on port $1:" >&2
    cat "$dir/caddy.log" >&2
    return 1
}
if [ "$balancer_on" != 0 ]; then
    # One address for the cluster: Caddy in front of every node. Websockets pass through
    # reverse_proxy as they are; any node serves any client, so no stickiness.
    if [ -n "$balancer_port" ]; then
        bport=$balancer_port
        start_balancer "$bport" || exit 1
    else
        bport=17878
        until claim_port "$bport" && port_free "$bport" && start_balancer "$bport" quiet; do
            bport=$((bport + 1))
            [ "$bport" -lt 17978 ] || { echo "no free port for the balancer in 17878-17977" >&2; exit 1; }
        done
    fi
    echo "balancer ws://127.0.0.1:$bport/ws pid $caddy_pid"
fi
for line in "${lines[@]}"; do echo "$line"; done
if [ "$bot_on" != 0 ]; then
    # A computer opponent for "play the computer"; every node offers it (the nodes share
    # the serving bots through Redis). It connects to node 1 and, should that node stop,
    # to the next one that answers.
    servers=$(printf 'ws://%s/ws,' "${addrs[@]}")
    servers=${servers%,}
    STOA_CONFIG_DIR="$dir/bot" "$cli" --plain --server "$servers" \
        bot --serve --levels 1,2,3,4,5 >"$dir/bot.log" 2>&1 &
    bot_pid=$!
    echo "bot $servers pid $bot_pid"
fi
if [ "$analysis_on" != 0 ]; then
    # An analysis worker (engine reviews, docs/analysis.md), on the last node (the review
    # queue is in Redis: it serves requests made on every node) and then the others.
    servers=$(printf 'ws://%s/ws,' "${addrs[@]}" | tr ',' '\n' | sed '/^$/d' | tac | paste -sd, -)
    STOA_CONFIG_DIR="$dir/analysis" STOA_ANALYSIS_KEY=$(cat "$dir/analysis-keys") \
        "$cli" --plain --server "$servers" analyse --serve >"$dir/analysis.log" 2>&1 &
    analysis_pid=$!
    echo "analysis $servers pid $analysis_pid"
fi
echo "ready: Ctrl-C stops everything"

# Runs until interrupted; a node that exits on its own (a SIGTERM drain) is reported once,
# the others keep running.
declare -A gone=()
while :; do
    sleep 0.5 &
    wait $! || true
    for i in $(seq "$n"); do
        pid=${pids[$((i - 1))]}
        if [ -z "${gone[$i]:-}" ] && ! kill -0 "$pid" 2>/dev/null; then
            gone[$i]=1
            echo "node$i exited"
        fi
    done
    if [ -n "$caddy_pid" ] && [ -z "${gone[balancer]:-}" ] && ! kill -0 "$caddy_pid" 2>/dev/null; then
        gone[balancer]=1
        echo "balancer exited"
    fi
done
