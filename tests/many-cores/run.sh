#!/usr/bin/env bash
# The measurements that wait for a machine with 16 cores or more (docs/performance.md,
# "Several cores"; deploy/OPERATIONS.md's capacity table), each one stoa-load run on
# fresh servers, one table per run in OUT_DIR and the headline rows in OUT_DIR/summary.md:
#
#   throughput-kK   one node on K = 1, 2, 4, 8 cores (CPUs 0..K-1), 8 generators on 8-15:
#                   moves/s should grow about K times
#   fanout-kK       one game's 10,000 spectators, the node on K = 1, 2, 4, 8 cores:
#                   p99 to the last spectator (target ≤ 20 ms on 8)
#   nodes-N         N = 1, 2, 4 cluster nodes of 2 cores each (CPUs 0..2N-1) over one
#                   Redis on CPU 15 (AOF, appendfsync always), 5 generators on 8-12:
#                   moves/s against N, and Redis's CPU per move (its core full = saturated)
#   redis-cluster   the 4 nodes at the same load over a Redis Cluster of 3 primaries on
#                   CPUs 13-15, the next step after one Redis
#   fanout-nodes3   10,000 spectators of one game spread over 3 nodes (CPUs 0-5)
#
# Run from the bundle (tests/many-cores/bundle.sh) or a checkout with release builds:
#   run.sh [OUT_DIR]            on 16 cores or more
#   run.sh --smoke [OUT_DIR]    every step tiny and unpinned, on any machine: checks the
#                               script, not the machine (the suite runs it)
# STOA_BIN_DIR names the directory of stoa-load (default: the bundle's bin/); the servers
# are $STOA_SERVER_BIN (default: stoa-server beside stoa-load).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "${STOA_BIN_DIR:-$here/bin}" && pwd)
export PATH="$bin:$PATH"
export STOA_SERVER_BIN="${STOA_SERVER_BIN:-$bin/stoa-server}"
smoke=0
if [ "${1:-}" = --smoke ]; then
  smoke=1
  shift
fi
out=$(realpath -m "${1:-$PWD/many-cores-$(date -u +%Y%m%dT%H%M%SZ)}")
mkdir -p "$out"
cores=$(nproc)
if [ "$smoke" = 0 ] && [ "$cores" -lt 16 ]; then
  echo "run.sh needs 16 cores, this machine has $cores (--smoke checks the script anywhere)" >&2
  exit 2
fi
summary="$out/summary.md"
{
  echo "# stoa many-core measurements, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "- machine: $cores CPUs, $(uname -srm), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "- server: $("$STOA_SERVER_BIN" --version 2>/dev/null || echo "$STOA_SERVER_BIN")$([ -f "$here/COMMIT" ] && echo ", commit $(cat "$here/COMMIT")")"
  [ "$smoke" = 1 ] && echo "- smoke run: tiny sizes, nothing pinned; no figure here means anything"
  echo
} > "$summary"
failed=0

# step NAME PLACEMENT SCENARIO SMOKE_SCENARIO: one stoa-load run. A smoke run drops the
# placement (the CPUs named may not exist) for --no-pin and two generators.
step() {
  local name=$1 placement=$2 scenario=$3 small=$4 args
  if [ "$smoke" = 1 ]; then
    args="--no-pin --generators 2 $small"
  else
    args="$placement $scenario"
  fi
  echo "== $name: stoa-load $args" >&2
  # shellcheck disable=SC2086 # the flags are words
  if stoa-load $args > "$out/$name.md" 2> "$out/$name.err"; then
    {
      echo "## $name"
      echo
      echo "\`stoa-load $args\`"
      echo
      grep -E '^(Throughput|Fanout)' "$out/$name.md" | sed 's/^/> /'
      echo
      echo '| figure | value |'
      echo '|---|---|'
      grep -E '^\| (moves/s|server CPU per move, µs|p99 move → opponent, ms|p99 move → last spectator, ms|p99 move → on the wire to the last spectator, ms|Redis CPU per move, µs|Redis commands per move|errors|moves every spectator received) \|' "$out/$name.md" || true
      echo
    } >> "$summary"
  else
    echo "## $name: FAILED (see $name.err)" >> "$summary"
    echo >> "$summary"
    tail -5 "$out/$name.err" >&2
    failed=1
  fi
}

tiny_throughput="throughput --games 4 --rounds 1 --moves 40"
tiny_fanout="fanout --spectators 20 --moves 3 --interval-ms 20"

for k in 1 2 4 8; do
  step "throughput-k$k" "--server-cpus 0-$((k - 1)) --load-cpus 8-15 --generators 8" \
    "throughput --games $((400 * k)) --rounds 10 --moves 1000000" "$tiny_throughput"
done
for k in 1 2 4 8; do
  step "fanout-k$k" "--server-cpus 0-$((k - 1)) --load-cpus 8-15 --generators 8" \
    "fanout --spectators 10000 --moves 40" "$tiny_fanout"
done
for n in 1 2 4; do
  step "nodes-$n" "--nodes $n --server-cpus 0-$((2 * n - 1)) --redis --redis-cpu 15 --load-cpus 8-12 --generators 5" \
    "throughput --games 1600 --rounds 5 --moves 1000000" "--nodes $n --redis $tiny_throughput"
done
step redis-cluster "--nodes 4 --server-cpus 0-7 --redis-cluster 3 --redis-cpu 13 --load-cpus 8-12 --generators 5" \
  "throughput --games 1600 --rounds 5 --moves 1000000" "--nodes 2 --redis-cluster 3 $tiny_throughput"
step fanout-nodes3 "--nodes 3 --server-cpus 0-5 --redis-cpu 15 --load-cpus 8-14 --generators 7" \
  "fanout --spectators 10000 --moves 40" "--nodes 3 $tiny_fanout"

echo "tables in $out, headlines in $summary" >&2
exit "$failed"
