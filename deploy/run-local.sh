#!/usr/bin/env bash
# Runs a local Stoa cluster without containers: a private Redis, N server nodes on loopback
# ports and a Caddy load balancer in front of them, until Ctrl-C (or SIGTERM), then stops
# them all cleanly.
#
#   deploy/run-local.sh [N]          # N nodes, 3 by default
#
# Prints one line per process once everything listens, the balancer first:
#   balancer ws://127.0.0.1:PORT/ws pid PID   (players connect here: web page and `stoa`)
#   redis redis://127.0.0.1:PORT/ pid PID
#   node1 ws://127.0.0.1:PORT/ws pid PID
#   bot ws://127.0.0.1:PORT/ws,... pid PID     (a `stoa bot --serve`, levels 1-5, on node 1
#                                              and falling back on the other nodes)
# The balancer (Caddy, `caddy run` on a Caddyfile generated in the temporary directory)
# spreads new connections over the nodes (least connections), checks each node's /health
# every second and stops sending anyone to a node that fails it or refuses a connection, so
# a node that dies is, for a player, just a reconnect. Players keep their identity across
# the nodes: tokens belong to the deployment (`welcome.deployment`, kept in this Redis).
# Any STOA_* variable (STOA_LEASE_MS, STOA_RATE_LIMIT, ...) reaches every node. The server
# binary is built in release mode unless STOA_SERVER_BIN names one, the client (for the bot)
# unless STOA_CLIENT_BIN does; STOA_BOT=0 starts no bot, STOA_BALANCER=0 no balancer (then
# Caddy need not be installed). Logs and Redis data live in a temporary directory that is
# removed at the end (kept with KEEP_DIR=1).
set -euo pipefail

n=${1:-3}
case $n in
'' | *[!0-9]*) echo "usage: $0 [N]   (N nodes, a number)" >&2; exit 2 ;;
esac
[ "$n" -ge 1 ] || { echo "N must be at least 1" >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${STOA_SERVER_BIN:-}
if [ -z "$bin" ]; then
    cargo build --release --quiet -p stoa-server --manifest-path "$root/Cargo.toml"
    bin=$root/target/release/stoa-server
fi
bot_on=${STOA_BOT:-1}
cli=${STOA_CLIENT_BIN:-}
if [ "$bot_on" != 0 ] && [ -z "$cli" ]; then
    cargo build --release --quiet -p stoa-cli --manifest-path "$root/Cargo.toml"
    cli=$root/target/release/stoa
fi
command -v redis-server >/dev/null || { echo "redis-server is not installed" >&2; exit 1; }
balancer_on=${STOA_BALANCER:-1}
if [ "$balancer_on" != 0 ] && ! command -v caddy >/dev/null; then
    echo "caddy is not installed (Debian: apt install caddy); STOA_BALANCER=0 runs without the balancer" >&2
    exit 1
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/stoa-local.XXXXXX")
pids=()
redis_pid=
bot_pid=
caddy_pid=

stop() {
    trap - INT TERM EXIT
    if [ -n "$bot_pid" ]; then
        kill -TERM "$bot_pid" 2>/dev/null || true
        wait "$bot_pid" 2>/dev/null || true
    fi
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
port=16379
until port_free "$port"; do port=$((port + 1)); done

redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --appendonly yes \
    --appendfsync always --save '' --daemonize no >"$dir/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 100); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.1
done
url="redis://127.0.0.1:$port/"
lines=("redis $url pid $redis_pid")

for i in $(seq "$n"); do
    "$bin" --listen 127.0.0.1:0 --redis "$url" --cluster --node-id "node$i" \
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
if [ "$balancer_on" != 0 ]; then
    # One address for the cluster: Caddy in front of every node. Websockets pass through
    # reverse_proxy as they are; any node serves any client, so no stickiness.
    bport=17878
    until port_free "$bport"; do bport=$((bport + 1)); done
    {
        echo "{"
        echo "	admin off"
        echo "}"
        # Any host name (127.0.0.1, localhost) on the port, on loopback only.
        echo "http://:$bport {"
        echo "	bind 127.0.0.1"
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
        caddy run --adapter caddyfile --config "$dir/Caddyfile" >"$dir/caddy.log" 2>&1 &
    caddy_pid=$!
    for _ in $(seq 300); do
        port_free "$bport" || break
        if ! kill -0 "$caddy_pid" 2>/dev/null; then
            echo "the balancer (caddy) failed to start:" >&2
            cat "$dir/caddy.log" >&2
            exit 1
        fi
        sleep 0.1
    done
    port_free "$bport" && { echo "the balancer did not start in time" >&2; exit 1; }
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
