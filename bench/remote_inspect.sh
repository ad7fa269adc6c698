#!/usr/bin/env bash
# Issue 38: what `inspect URL` fetches of a model on a web server, against the model's size.
# Debian's nginx (nginx-light) serves generated models on 127.0.0.1; its access log counts the
# bytes each request sent. Median of RUNS runs (default 3) of /usr/bin/time.
#   bench/remote_inspect.sh [BUILD_DIR]   (default build)
# Models: a 1 GiB inline model (repack-genmodel --weights 1G --storage inline) and a 256 MiB
# external one of 100,000 tensors (--weights 256M --tensors 100000). The last row asks the
# inline model through latency_proxy.py, which answers every request LATENCY_MS (default 20) ms
# late: the issue's "20 ms added to every response".
set -euo pipefail
runs=${RUNS:-3}
# The tools, checked, and median() (bench_env.sh); the build folder is the first argument.
REPACK_BUILD_DIR=$(realpath "${1:-build}")
# shellcheck source=bench_env.sh disable=SC2154 # sets build, gen, cli
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh"
scratch=$(mktemp -d /var/tmp/repack-remote.XXXXXX)
mkdir -p "$scratch/www/inline" "$scratch/www/external"
# shellcheck source=bench_nginx.sh disable=SC2154 # sets port, server; served()
source "$(dirname "${BASH_SOURCE[0]}")/bench_nginx.sh"
"$gen" --out "$scratch/www/inline/model.onnx" --weights 1G --storage inline >/dev/null
"$gen" --out "$scratch/www/external/model.onnx" --weights 256M --tensors 100000 >/dev/null
sleep 0.5

row() {
    local label=$1 url=$2 files=$3 secs="" s k requests bytes
    for ((r = 0; r < runs; r++)); do
        : >"$scratch/access.log"
        /usr/bin/time -f "%e %M" -o "$scratch/time" "$cli" inspect --json "$url" >/dev/null
        read -r s k < <(tail -n 1 "$scratch/time")
        secs+="$s"$'\n'
    done
    read -r requests bytes < <(served)
    printf '%-34s %12s %10s %9s %14s\n' "$label" "$(du -cb $files | tail -n 1 | cut -f1)" \
        "$(median <<<"$secs")" "$requests" "$bytes"
}
printf '%-34s %12s %10s %9s %14s\n' "inspect --json URL" "model bytes" seconds requests "bytes fetched"
row "1 GiB inline" "http://127.0.0.1:$port/inline/model.onnx" "$scratch/www/inline/*"
row "256 MiB external, 100k tensors" "http://127.0.0.1:$port/external/model.onnx" \
    "$scratch/www/external/*"
latency=${LATENCY_MS:-20}
/usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/latency_proxy.py" "$port" "$latency" \
    "$scratch/proxy.port" &
proxy=$!
trap 'kill $proxy $server 2>/dev/null; wait $proxy $server 2>/dev/null; rm -rf "$scratch"' EXIT
for ((i = 0; i < 100; i++)); do [[ -s $scratch/proxy.port ]] && break; sleep 0.05; done
row "1 GiB inline, +${latency} ms a response" \
    "http://127.0.0.1:$(cat "$scratch/proxy.port")/inline/model.onnx" "$scratch/www/inline/*"
