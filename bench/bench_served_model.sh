# shellcheck shell=bash
# Sourced by the remote benches that read a 1 GiB model from a web server (remote_verify.sh,
# remote_repack.sh): the tools (bench_env.sh; the build folder is the script's first argument),
# curl, and `repack-genmodel --weights 1G` (external, one data file, dense) as $scratch/www/m/,
# served by nginx (bench_nginx.sh) from a settled page cache.
# Sets build, gen, cli, scratch, port, server, base (the model's folder URL), total (its bytes).
REPACK_BUILD_DIR=$(realpath "${1:-build}")
# shellcheck source=bench_env.sh disable=SC2154 # sets build, gen, cli
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh"
command -v curl >/dev/null || { echo "needs curl: apt-get install curl" >&2; exit 2; }
scratch=$(mktemp -d /var/tmp/repack-remote.XXXXXX)
mkdir -p "$scratch/www/m"
# shellcheck source=bench_nginx.sh disable=SC2154 # sets port, server; served()
source "$(dirname "${BASH_SOURCE[0]}")/bench_nginx.sh"
"$gen" --out "$scratch/www/m/model.onnx" --weights 1G >/dev/null
settle "$scratch"/www/m/*
sleep 0.5
# shellcheck disable=SC2034 # base and total are for the script that sources this one
base="http://127.0.0.1:$port/m"
# shellcheck disable=SC2034
total=$(du -cb "$scratch"/www/m/* | tail -n 1 | cut -f1)
