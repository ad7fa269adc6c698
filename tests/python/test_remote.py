"""Models that are not local files (issue 38): load(url), verify(url) and inspect_folder(url) take
a URL as the CLI's MODEL does, and give what they give of a local copy of the same files. Served
by Debian's nginx on 127.0.0.1 (skipped with a message when it is not installed): a web server,
and a Hugging Face Hub for hf:// (the tree listing a static file, the resolve answers with
X-Repo-Commit)."""
import _thread
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest

import numpy as np
import onnx

import onnx_repack
from support import make_model

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def nginx_executable():
    found = shutil.which("nginx")
    if found:
        return found
    for folder in ("/usr/sbin", "/sbin"):
        if os.access(os.path.join(folder, "nginx"), os.X_OK):
            return os.path.join(folder, "nginx")
    return None


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answers(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


class Nginx:
    """nginx in the foreground (`nginx -p DIR -c CONF -e stderr`) serving DIR/www, and the
    repository org/repo of a Hub: DIR/repo/PATH at /org/repo/resolve/REV/PATH, its tree
    listing DIR/tree.json at /api/models/org/repo/tree/..."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="repack-nginx-")
        for sub in ("www", "repo", "t"):
            os.makedirs(os.path.join(self.dir, sub))
        self.process = None
        self.port = None

    def config(self):
        d = self.dir
        return f"""daemon off; master_process off; pid {d}/nginx.pid; error_log stderr warn;
events {{}}
http {{
  access_log {d}/access.log;
  client_body_temp_path {d}/t/body; proxy_temp_path {d}/t/proxy;
  fastcgi_temp_path {d}/t/fcgi; uwsgi_temp_path {d}/t/uwsgi; scgi_temp_path {d}/t/scgi;
  server {{
    listen 127.0.0.1:{self.port};
    root {d}/www;
    location ~ ^/api/models/org/repo/tree/ {{
      default_type application/json;
      alias {d}/tree.json;
    }}
    location ~ ^/org/repo/resolve/[^/]+/(.+)$ {{
      alias {d}/repo/$1;
      add_header X-Repo-Commit {COMMIT} always;
    }}
  }}
}}
"""

    def start(self):
        """None when serving, else why not."""
        nginx = nginx_executable()
        if not nginx:
            return "nginx is not installed (apt-get install nginx-light)"
        why = ""
        for _ in range(5):  # another process may take the free port first
            self.port = free_port()
            conf = os.path.join(self.dir, "nginx.conf")
            with open(conf, "w") as f:
                f.write(self.config())
            self.process = subprocess.Popen([nginx, "-p", self.dir, "-c", conf, "-e", "stderr"],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and self.process.poll() is None:
                if answers(self.port):
                    return None
                time.sleep(0.05)
            self.stop()
            why = self.process.stderr.read().decode(errors="replace")
            if "Address already in use" not in why:
                break
        return f"nginx did not answer on 127.0.0.1:{self.port}: {why}"

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)

    def close(self):
        self.stop()
        if self.process:
            self.process.stderr.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def url(self, path):
        return f"http://127.0.0.1:{self.port}/{path}"

    def requests(self):
        """The request lines nginx logged so far ("HEAD /path HTTP/1.1"). nginx logs a request
        after its answer has gone, so this first asks for a marker and waits for the marker's
        line: nginx's one process runs one event at a time, so every answer had before it is
        then logged too. The markers' lines are left out."""
        path = os.path.join(self.dir, "access.log")
        self.markers = getattr(self, "markers", 0) + 1
        marker = f"GET /.log-marker-{self.markers} HTTP/1.0"
        lines = []
        if self.process and self.process.poll() is None:
            with socket.create_connection(("127.0.0.1", self.port), timeout=10) as client:
                client.sendall(f"{marker}\r\nHost: 127.0.0.1\r\n\r\n".encode())
                while client.recv(4096):
                    pass
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                lines = self.logged(path)
                if marker in lines:
                    break
                time.sleep(0.005)
        else:
            lines = self.logged(path)
        return [line for line in lines if not line.startswith("GET /.log-marker-")]

    @staticmethod
    def logged(path):
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return [line.split('"')[1] for line in f if '"' in line]

    def list_repository(self):
        """tree.json: the files of DIR/repo as the Hub's tree API lists them (git blob ids as
        nginx's ETag, which the resolve answers send)."""
        entries = []
        root = os.path.join(self.dir, "repo")
        for folder, _, files in os.walk(root):
            for name in sorted(files):
                st = os.stat(os.path.join(folder, name))
                entries.append({"type": "file", "size": st.st_size,
                                "path": os.path.relpath(os.path.join(folder, name), root),
                                "oid": f"{int(st.st_mtime):x}-{st.st_size:x}"})
        with open(os.path.join(self.dir, "tree.json"), "w") as f:
            json.dump(entries, f)


class Remote(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Nginx()
        why = cls.server.start()
        if why:
            cls.server.close()
            raise unittest.SkipTest(why)
        cls.saved_env = {k: os.environ.get(k) for k in
                         ("HF_ENDPOINT", "HF_HOME", "HF_HUB_CACHE", "HF_TOKEN", "NO_PROXY",
                          "HF_HUB_OFFLINE")}
        os.environ.update({"HF_ENDPOINT": f"http://127.0.0.1:{cls.server.port}",
                           "HF_HOME": os.path.join(cls.server.dir, "hf"),
                           "HF_HUB_CACHE": os.path.join(cls.server.dir, "hf", "hub"),
                           "NO_PROXY": "127.0.0.1,localhost"})
        for name in ("HF_TOKEN", "HF_HUB_OFFLINE"):
            os.environ.pop(name, None)
        www = os.path.join(cls.server.dir, "www")
        cls.local = make_model(os.path.join(www, "m"))
        # An export folder of the Hub: two graphs holding the same weights (shared content the
        # folder report finds by reading them), each with its own data file.
        onnx_dir = os.path.join(cls.server.dir, "repo", "onnx")
        make_model(onnx_dir, "decoder_model.onnx")
        make_model(onnx_dir, "decoder_with_past_model.onnx")
        cls.server.list_repository()

    @classmethod
    def tearDownClass(cls):
        for k, v in cls.saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        cls.server.close()

    def assertSameTensors(self, remote, local):
        self.assertEqual([(t.name, t.scope, t.kind, str(t.dtype), t.shape, t.storage, t.location,
                           t.offset, t.length) for t in remote.tensors],
                         [(t.name, t.scope, t.kind, str(t.dtype), t.shape, t.storage, t.location,
                           t.offset, t.length) for t in local.tensors])
        for r, l in zip(remote.tensors, local.tensors):
            np.testing.assert_array_equal(r.numpy(), l.numpy(), err_msg=r.name)

    def test_load_url_gives_the_local_copys_tensors(self):
        url = self.server.url("m/model.onnx")
        remote = onnx_repack.load(url)
        local = onnx_repack.load(self.local)
        self.assertSameTensors(remote, local)
        self.assertEqual(remote.problems, [])
        self.assertEqual(remote.path, url)
        report = remote.inspect()
        expected = local.inspect()
        self.assertEqual(report["tensors"], expected["tensors"])
        self.assertEqual(report["problems"], expected["problems"])
        self.assertIn("127.0.0.1", json.dumps(report))

    def test_verify_url_is_verify_of_the_local_copy(self):
        url = self.server.url("m/model.onnx")
        remote = onnx_repack.verify(url)
        local = onnx_repack.verify(self.local)
        self.assertTrue(remote["ok"], remote)
        # The versions of the server's files it read; none of a local model's.
        self.assertEqual([s["name"] for s in remote.pop("sources")],
                         [url, url + ".data"])
        self.assertEqual(local.pop("sources"), [])
        text = json.dumps(remote).replace(url[:-len("model.onnx")],
                                          os.path.dirname(self.local) + "/")
        self.assertEqual(json.loads(text), local)

    def test_errors_name_the_url_without_its_secrets(self):
        url = self.server.url("m/none.onnx")
        with self.assertRaises(onnx_repack.NotFound) as caught:
            onnx_repack.load(url + "?X-Amz-Signature=secret")
        self.assertIn(url, str(caught.exception))
        self.assertNotIn("secret", str(caught.exception))
        self.assertEqual(caught.exception.kind, "not_found")
        with self.assertRaises(onnx_repack.UsageError) as caught:
            onnx_repack.load(f"http://user:secret@127.0.0.1:{self.server.port}/m/model.onnx")
        self.assertNotIn("secret", str(caught.exception))
        with self.assertRaises(onnx_repack.UsageError):
            onnx_repack.load("ftp://127.0.0.1/m/model.onnx")

    def test_a_path_like_is_a_path(self):
        import pathlib
        with self.assertRaises(FileNotFoundError):
            onnx_repack.load(pathlib.PurePosixPath("hf:", "org", "repo", "model.onnx"))

    def test_save_takes_a_url_as_its_source(self):
        # A remote model saved to a local folder is what a save of the local copy writes, byte
        # for byte: the URL is opened as a URL, never taken for a path that does not exist.
        out = os.path.join(self.server.dir, "saved", "model.onnx")
        twin = os.path.join(self.server.dir, "saved-twin", "model.onnx")
        onnx_repack.save(self.server.url("m/model.onnx"), out)
        onnx_repack.save(self.local, twin)
        self.assertSameTensors(onnx_repack.load(out), onnx_repack.load(self.local))
        self.assertEqual(sorted(os.listdir(os.path.dirname(out))),
                         sorted(os.listdir(os.path.dirname(twin))))
        for name in os.listdir(os.path.dirname(out)):
            with open(os.path.join(os.path.dirname(out), name), "rb") as a, \
                    open(os.path.join(os.path.dirname(twin), name), "rb") as b:
                self.assertEqual(a.read(), b.read(), name)

    def test_inspect_folder_of_the_hub_is_the_local_folders_report(self):
        before = len(self.server.requests())
        remote = onnx_repack.inspect_folder("hf://org/repo/onnx")
        local_dir = os.path.join(self.server.dir, "repo", "onnx")
        local = onnx_repack.inspect_folder(local_dir)
        name = f"hf://org/repo@{COMMIT}/onnx/"
        self.assertEqual(remote["folder"], name)
        text = json.dumps(remote).replace(name, local_dir + "/").replace(name[:-1], local_dir)
        remote = json.loads(text)
        remote["folder"] = local["folder"]
        self.assertEqual(remote, local)
        self.assertGreater(local["duplicated_bytes"], 0)  # the data files were read to tell
        requests = self.server.requests()[before:]
        self.assertEqual(sum("/api/models/org/repo/tree/main/onnx" in r for r in requests), 1,
                         requests)
        self.assertEqual(sum("/resolve/main/" in r for r in requests), 1, requests)  # one pin

    def test_save_folder_of_the_hub_is_the_save_of_its_local_copy(self):
        # save_folder("hf://ORG/REPO/onnx", out) writes, file for file and byte for byte, what
        # the save of the local copy writes, with one shared data file or each graph on its own;
        # the folder listed once and pinned once; onnx loads every graph it wrote.
        local_dir = os.path.join(self.server.dir, "repo", "onnx")
        for shared in ("model.onnx_data", None):
            out = os.path.join(self.server.dir, f"folder-saved-{shared}")
            twin = os.path.join(self.server.dir, f"folder-twin-{shared}")
            before = len(self.server.requests())
            report = onnx_repack.save_folder("hf://org/repo/onnx", out, shared_data=shared)
            requests = self.server.requests()[before:]
            onnx_repack.save_folder(local_dir, twin, shared_data=shared)
            self.assertEqual(report["models"],
                             ["decoder_model.onnx", "decoder_with_past_model.onnx"])
            self.assertEqual(sorted(os.listdir(out)), sorted(os.listdir(twin)))
            for name in os.listdir(twin):
                with open(os.path.join(out, name), "rb") as a, \
                        open(os.path.join(twin, name), "rb") as b:
                    self.assertEqual(a.read(), b.read(), name)
                if name.endswith(".onnx"):
                    onnx.load(os.path.join(out, name))
            if shared:
                self.assertEqual(report["shared_ranges"] * 2, report["external_tensors"])
            self.assertEqual(sum("/api/models/org/repo/tree/main/onnx" in r for r in requests),
                             1, requests)
            self.assertEqual(sum("/resolve/main/" in r for r in requests), 1, requests)

    def test_save_folder_of_the_hub_never_writes_into_the_hub_cache(self):
        out = os.path.join(os.environ["HF_HUB_CACHE"], "elsewhere")
        with self.assertRaises(onnx_repack.UsageError) as caught:
            onnx_repack.save_folder("hf://org/repo/onnx", out, shared_data="model.onnx_data")
        self.assertIn("inside the Hugging Face cache", str(caught.exception))
        self.assertFalse(os.path.exists(out))

    def test_inspect_folder_of_a_missing_repository(self):
        with self.assertRaises(onnx_repack.NotFound) as caught:
            onnx_repack.inspect_folder("hf://org/none/onnx")
        self.assertIn("hf://org/none/onnx/", str(caught.exception))


class StalledServerTest(unittest.TestCase):
    def test_ctrl_c_stops_a_stalled_load(self):
        # A server that accepts and never answers: load(url) waits on it with the GIL released;
        # Ctrl+C (SIGINT) stops it within about a second, as it stops a save.
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        url = "http://127.0.0.1:%d/m/model.onnx" % listener.getsockname()[1]
        self.interrupted(lambda: onnx_repack.load(url), listener)

    def test_ctrl_c_stops_a_stalled_folder_listing(self):
        # The same for inspect_folder of a Hub folder whose Hub never answers its listing.
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        saved = os.environ.get("HF_ENDPOINT")
        os.environ["HF_ENDPOINT"] = "http://127.0.0.1:%d" % listener.getsockname()[1]
        try:
            self.interrupted(lambda: onnx_repack.inspect_folder("hf://org/repo/onnx"), listener)
        finally:
            if saved is None:
                os.environ.pop("HF_ENDPOINT", None)
            else:
                os.environ["HF_ENDPOINT"] = saved

    def interrupted(self, call, listener):
        """Calls `call`, interrupted 0.5 s in as Ctrl+C would: KeyboardInterrupt within 5 s."""
        def interrupt():
            time.sleep(0.5)
            _thread.interrupt_main()

        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        thread = threading.Thread(target=interrupt)
        started = time.monotonic()
        try:
            thread.start()
            with self.assertRaises(KeyboardInterrupt):
                call()
            thread.join()
        finally:
            signal.signal(signal.SIGINT, previous)
            listener.close()
        self.assertLess(time.monotonic() - started, 5.0)


class HostileHubTest(unittest.TestCase):
    def test_the_token_never_follows_a_one_slash_location(self):
        # A Hub whose resolve redirects to "http:/127.0.0.2:PORT/steal" (one slash): libcurl
        # reads that as another host, so the transport sends it no token, whatever the spelling.
        import http.server

        caught = []

        class Catcher(http.server.BaseHTTPRequestHandler):
            def do_HEAD(self):
                caught.append(self.headers.get("Authorization"))
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_HEAD

            def log_message(self, *args):
                pass

        catcher = http.server.HTTPServer(("127.0.0.2", 0), Catcher)
        steal = "http:/127.0.0.2:%d/steal" % catcher.server_address[1]

        class Hub(http.server.BaseHTTPRequestHandler):
            def do_HEAD(self):
                self.send_response(302)
                self.send_header("Location", steal)
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("X-Linked-Etag", '"sha"')
                self.send_header("X-Linked-Size", "100")
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_HEAD

            def log_message(self, *args):
                pass

        hub = http.server.HTTPServer(("127.0.0.1", 0), Hub)
        threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in (catcher, hub)]
        for t in threads:
            t.start()
        saved = {k: os.environ.get(k) for k in ("HF_ENDPOINT", "HF_TOKEN", "HF_HOME", "NO_PROXY")}
        home = tempfile.mkdtemp()
        try:
            os.environ.update({"HF_ENDPOINT": "http://127.0.0.1:%d" % hub.server_address[1],
                               "HF_TOKEN": "hf_secretForTheHubOnly", "HF_HOME": home,
                               "NO_PROXY": "127.0.0.1,127.0.0.2,localhost"})
            with self.assertRaises(onnx_repack.Error) as error:
                onnx_repack.load("hf://org/repo/m/model.onnx")
            self.assertNotIn("hf_secretForTheHubOnly", str(error.exception))
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            for s in (catcher, hub):
                s.shutdown()
                s.server_close()
            shutil.rmtree(home, ignore_errors=True)
        self.assertTrue(caught, "the Location was not asked: the test proves nothing")
        self.assertEqual(caught, [None] * len(caught))


if __name__ == "__main__":
    unittest.main()
