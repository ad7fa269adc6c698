# Sourced by the remote benches: Debian's nginx (nginx-light) serving $scratch/www on a free port
# of 127.0.0.1, its access log ($scratch/access.log) one line per request: "REQUEST STATUS
# BODY_BYTES". Needs $scratch; sets port and server (the pid) and stops the server on exit.
command -v nginx >/dev/null || { echo "needs nginx: apt-get install nginx-light" >&2; exit 2; }
mkdir -p "$scratch/www" "$scratch/t"
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$scratch/nginx.conf" <<CONF
daemon off; master_process off; pid $scratch/nginx.pid; error_log stderr warn;
events {}
http {
  log_format sent '\$request \$status \$body_bytes_sent';
  access_log $scratch/access.log sent;
  client_body_temp_path $scratch/t/b; proxy_temp_path $scratch/t/p; fastcgi_temp_path $scratch/t/f;
  uwsgi_temp_path $scratch/t/u; scgi_temp_path $scratch/t/s;
  server { listen 127.0.0.1:$port; root $scratch/www; }
}
CONF
nginx -p "$scratch" -c "$scratch/nginx.conf" -e stderr 2>"$scratch/nginx.err" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$scratch"' EXIT
# requests and body bytes the access log holds: "N BYTES"
served() { awk '{ s += $NF } END { print NR, s + 0 }' "$scratch/access.log"; }
