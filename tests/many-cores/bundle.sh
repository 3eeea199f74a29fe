#!/usr/bin/env bash
# Packs what tests/many-cores/run.sh needs onto a machine with no Rust, no Redis and no
# checkout (the 16-core machines lent for measurements have neither): the release
# stoa-server and stoa-load, stripped, and this machine's redis-server and redis-cli with
# the libraries they load beyond glibc, behind wrappers that point only them at those.
#
#   tests/many-cores/bundle.sh [OUT.tar.gz]     # default target/many-cores.tar.gz
#
# Then, on the big machine: tar xzf many-cores.tar.gz && stoa-many-cores/run.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "${1:-$root/target/many-cores.tar.gz}")
cd "$root"
cargo build --release -p stoa-server -p stoa-tests --bins
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage="$work/stoa-many-cores"
mkdir -p "$stage/bin" "$stage/libexec" "$stage/lib"
for b in stoa-server stoa-load; do
  cp "target/release/$b" "$stage/bin/$b"
  strip "$stage/bin/$b"
done
cp tests/many-cores/run.sh "$stage/run.sh"
# What was measured, for the report.
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' with uncommitted changes')" > "$stage/COMMIT"
for tool in redis-server redis-cli; do
  real=$(readlink -f "$(command -v "$tool")")
  # Redis picks its mode from its name (a redis-server named redis-check-rdb checks files).
  cp "$real" "$stage/libexec/$tool"
  # The libraries it loads, but glibc's own: the big machine's newer glibc serves those.
  ldd "$real" | awk '/=> \// { print $3 }' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so.*|libm.so.*|libdl.so.*|librt.so.*|libpthread.so.*|ld-linux*) ;;
      *) cp -L "$lib" "$stage/lib/" ;;
    esac
  done
  cat > "$stage/bin/$tool" <<WRAP
#!/bin/sh
# $tool with the libraries it was built against (exec keeps its pid: stoa-load pins it).
here=\$(dirname "\$(readlink -f "\$0")")
LD_LIBRARY_PATH="\$here/../lib" exec "\$here/../libexec/$tool" "\$@"
WRAP
  chmod +x "$stage/bin/$tool"
done
mkdir -p "$(dirname "$out")"
tar czf "$out" -C "$work" stoa-many-cores
echo "$out ($(du -h "$out" | cut -f1)): copy it to the machine, then tar xzf and run stoa-many-cores/run.sh"
