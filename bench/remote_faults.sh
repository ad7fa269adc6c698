#!/usr/bin/env bash
# Issue 48: how long a command takes to end against a server that turns against it, and how fast
# a signal stops it. A small Python server on 127.0.0.1 plays each part:
#   trickle  every answer sends its head and 100 bytes, then nothing for 120 s;
#   busy     every answer is 503 with Retry-After: 1.
# Rows: `inspect URL` against the trickle (the stall rule: under 1 KiB/s for 30 s), the same
# with --timeout 5, `inspect URL` against the busy server (the command's retry budget), and
# SIGINT / SIGTERM sent to `repack URL -o OUT` 1 s into a trickle: seconds from the signal to
# the exit, the exit status, and what OUT holds then.
#   bench/remote_faults.sh [BUILD_DIR]   (default build; needs /usr/bin/python3)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
cli="$build/app/onnx-repack"
scratch=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$scratch"' EXIT

cat >"$scratch/server.py" <<'PY'
import http.server, sys, time
mode = sys.argv[1]
SIZE = 1 << 20
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def head(self, body):
        if mode == "busy":
            self.send_response(503)
            self.send_header("Retry-After", "1")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return False
        self.send_response(206 if body and self.headers.get("Range") else 200)
        self.send_header("ETag", '"v1"')
        if body and self.headers.get("Range"):
            first, last = self.headers["Range"][6:].split("-")
            self.send_header("Content-Range", f"bytes {first}-{last}/{SIZE}")
            self.send_header("Content-Length", str(int(last) - int(first) + 1))
        else:
            self.send_header("Content-Length", str(SIZE))
        self.end_headers()
        return True
    def do_HEAD(self):
        self.head(False)
    def do_GET(self):
        if self.head(True):
            self.wfile.write(b"\x08" * 100)
            self.wfile.flush()
            time.sleep(120)
http.server.ThreadingHTTPServer.daemon_threads = True
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
PY

start_server() {
    if [ -n "${server:-}" ]; then
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
    : >"$scratch/port"
    /usr/bin/python3 "$scratch/server.py" "$1" >"$scratch/port" &
    server=$!
    while [ ! -s "$scratch/port" ]; do sleep 0.05; done
    url="http://127.0.0.1:$(cat "$scratch/port")/m/model.onnx"
}

# Seconds a command took and its exit status.
timed() {
    local started ended status=0
    started=$(date +%s.%N)
    "$@" >/dev/null 2>"$scratch/err" || status=$?
    ended=$(date +%s.%N)
    printf '%6.2f s  exit %3d  %s\n' "$(echo "$ended - $started" | bc)" "$status" \
        "$(tail -n 1 "$scratch/err" | cut -c1-110)"
}

start_server trickle
printf '%-34s ' "inspect, trickle"
timed "$cli" inspect "$url"
printf '%-34s ' "inspect --timeout 5, trickle"
timed "$cli" inspect --timeout 5 "$url"
start_server busy
printf '%-34s ' "inspect, 503 + Retry-After: 1"
timed "$cli" inspect "$url"

# A script's background job starts with SIGINT ignored, which the CLI keeps (as tools do):
# job control gives it the default disposition, as a terminal's Ctrl-C would meet.
set -m
start_server trickle
for sig in INT TERM; do
    out="$scratch/out-$sig"
    mkdir -p "$out"
    "$cli" repack "$url" -o "$out/model.onnx" >/dev/null 2>"$scratch/err" &
    pid=$!
    sleep 1
    sent=$(date +%s.%N)
    kill -s "$sig" "$pid"
    status=0
    wait "$pid" || status=$?
    ended=$(date +%s.%N)
    printf '%-34s %6.3f s  exit %3d  OUT holds %d files\n' "repack, SIG$sig 1 s in" \
        "$(echo "$ended - $sent" | bc)" "$status" "$(find "$out" -type f | wc -l)"
done
kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; server=
