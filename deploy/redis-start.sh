#!/bin/sh
# Starts redis-server as the primary or as a replica: whichever the Sentinels say this
# instance is. Used by deploy/compose.sentinel.yaml and, the same text, by
# deploy/k8s/sentinel/redis-sentinel.yaml (tests/tests/deploy.rs checks they agree).
#
#   redis-start.sh ME FIRST_PRIMARY SENTINELS MASTER_NAME [redis-server option...]
#
# ME and FIRST_PRIMARY are host:port (ME's host is what this instance announces to the
# Sentinels and the port it listens on), SENTINELS is host:port,host:port,... and
# MASTER_NAME the name they monitor (`sentinel monitor <name> ...`).
#
# Why not a fixed `replicaof`: after a failover, a container or pod restarts with the same
# arguments. The old primary, started as a primary, would take writes beside the promoted
# replica until Sentinel demotes it (and those writes are then thrown away); the promoted
# replica, started with `replicaof`, would drop its data for a full copy of a stale one.
# So the Sentinels are asked first, and only when none answers (the very first start,
# before any Sentinel runs) does FIRST_PRIMARY decide.
set -eu
me=$1
first=$2
sentinels=$3
name=$4
shift 4

primary=""
for s in $(echo "$sentinels" | tr ',' ' '); do
  # `host\nport\n` when the Sentinel knows the name; nothing (or an error) otherwise.
  answer=$(redis-cli -h "${s%:*}" -p "${s##*:}" --raw \
    sentinel get-master-addr-by-name "$name" 2>/dev/null | tr '\n' ':') || answer=""
  answer=${answer%:}
  case $answer in
    *:*[!0-9]* | :* | *: | "") continue ;;
    *:*) primary=$answer; break ;;
  esac
done
if [ -z "$primary" ]; then
  primary=$first
fi

if [ "$primary" = "$me" ]; then
  echo "redis-start: $me starts as the primary of $name" >&2
  exec redis-server "$@" --port "${me##*:}" --replica-announce-ip "${me%:*}"
fi
echo "redis-start: $me starts as a replica of $primary ($name)" >&2
exec redis-server "$@" --port "${me##*:}" --replica-announce-ip "${me%:*}" \
  --replicaof "${primary%:*}" "${primary##*:}"
