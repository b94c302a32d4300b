#!/usr/bin/env bash
# Installs Triton's perf_analyzer load generator (PyPI wheel perf-analyzer 2.60.0) into DIR
# (default: $HOME/.cache/perf-analyzer) and prints the path of a runnable wrapper.
#
# The wheel is tagged manylinux_2_38 and its binary needs glibc >= 2.38. On an older system
# (Debian 12 has 2.36) the wrapper runs it with libc6, libstdc++6 and libgcc-s1 from the next
# Debian release, unpacked into DIR only: the system's own libraries and apt state are untouched.
#
# Use it with --service-kind=dynamic_grpc, which speaks plain KServe v2 ModelInfer to any server;
# bench/infer_request_gen.py writes the request it sends (the benchmarks pass the path this
# prints with --perf-analyzer):
#   PA=$(bash bench/install_perf_analyzer.sh)
#   echo '{"data":[{"message_generator":"python3 bench/infer_request_gen.py add_one INPUT:FP32:1,10"}]}' > in.json
#   $PA --service-kind=dynamic_grpc -u 127.0.0.1:9000 \
#       --grpc-method=inference.GRPCInferenceService/ModelInfer --input-data=in.json \
#       --concurrency-range 1:4:3 --measurement-interval 3000 -f out.csv
# dynamic_grpc does not check reply status: send the request once with a real client first.
set -euo pipefail
DIR=${1:-$HOME/.cache/perf-analyzer}
VERSION=2.60.0
mkdir -p "$DIR/bin"
if [ -x "$DIR/bin/perf_analyzer" ] && "$DIR/bin/perf_analyzer" --version >/dev/null 2>&1; then
  echo "$DIR/bin/perf_analyzer"; exit 0
fi
{
  tmp=$(mktemp -d)
  python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux_2_38_x86_64 \
    -d "$tmp" "perf-analyzer==$VERSION"
  python3 -m zipfile -e "$tmp"/perf_analyzer-*.whl "$tmp/x"
  install -m 755 "$(find "$tmp/x" -type f -name perf_analyzer | head -n 1)" "$DIR/perf_analyzer.bin"
  rm -rf "$tmp"

  glibc=$(ldd --version | head -n 1 | grep -oE '[0-9]+\.[0-9]+$')
  if python3 -c "import sys; sys.exit(0 if tuple(map(int,'$glibc'.split('.'))) >= (2,38) else 1)"; then
    printf '#!/bin/sh\nexec "%s" "$@"\n' "$DIR/perf_analyzer.bin" > "$DIR/bin/perf_analyzer"
  else
    # A private apt setup for the next Debian release, built from this system's own sources.
    apt="$DIR/apt"; mkdir -p "$apt/etc/sources.list.d" "$apt/state/lists/partial" "$apt/cache/archives/partial" "$apt/debs"
    uri=$(grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -n 1 | awk '{print $2}')
    [ -n "$uri" ] || uri=$(grep -hE '^deb ' /etc/apt/sources.list 2>/dev/null | grep -v security | head -n 1 | awk '{print $2}')
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri trixie main" > "$apt/etc/sources.list"
    o=(-o "Dir::Etc::SourceList=$apt/etc/sources.list" -o "Dir::Etc::SourceParts=$apt/etc/sources.list.d"
       -o "Dir::State=$apt/state" -o "Dir::Cache=$apt/cache" -o "Dir::State::status=/var/lib/dpkg/status")
    apt-get "${o[@]}" -qq update
    (cd "$apt/debs" && apt-get "${o[@]}" -qq download libc6 libstdc++6 libgcc-s1)
    for d in "$apt"/debs/*.deb; do dpkg-deb -x "$d" "$DIR/root"; done
    lib="$DIR/root/usr/lib/x86_64-linux-gnu"
    printf '#!/bin/sh\nexec "%s/ld-linux-x86-64.so.2" --library-path "%s:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu" "%s" "$@"\n' \
      "$lib" "$lib" "$DIR/perf_analyzer.bin" > "$DIR/bin/perf_analyzer"
  fi
  chmod +x "$DIR/bin/perf_analyzer"
  "$DIR/bin/perf_analyzer" --version
} >&2
echo "$DIR/bin/perf_analyzer"
