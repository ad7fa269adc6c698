#!/usr/bin/python3
"""A forwarding HTTP/1.1 proxy on 127.0.0.1 that answers every request `delay` ms late: a server
across a network, for the remote benches (tc's netem is not there in a container).

    latency_proxy.py UPSTREAM_PORT DELAY_MS PORT_FILE

Listens on a free port of 127.0.0.1 and writes it to PORT_FILE once it accepts connections.
GET and HEAD are forwarded to 127.0.0.1:UPSTREAM_PORT with their Range and validator headers;
the answer's status, headers and body come back as sent, the body in pieces of 1 MiB.
"""
import http.client
import http.server
import sys
import threading
import time

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade"}
FORWARDED = ("range", "if-match", "if-range", "if-none-match", "authorization")


def main():
    upstream, delay, port_file = int(sys.argv[1]), float(sys.argv[2]) / 1000, sys.argv[3]
    local = threading.local()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def forward(self):
            time.sleep(delay)
            if not hasattr(local, "connection"):
                local.connection = http.client.HTTPConnection("127.0.0.1", upstream)
            headers = {k: v for k, v in self.headers.items() if k.lower() in FORWARDED}
            local.connection.request(self.command, self.path, headers=headers)
            answer = local.connection.getresponse()
            self.send_response_only(answer.status, answer.reason)
            for name, value in answer.getheaders():
                if name.lower() not in HOP_BY_HOP:
                    self.send_header(name, value)
            self.end_headers()
            while self.command != "HEAD":
                piece = answer.read(1 << 20)
                if not piece:
                    break
                self.wfile.write(piece)
            answer.read()

        do_GET = forward
        do_HEAD = forward

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(port_file, "w") as out:
        out.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
