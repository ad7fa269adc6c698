"""Ctrl+C and an exception in the progress callback cancel a save through the core's cancel
token: the originals stay byte-identical, no temporary is left, and the exception is raised;
also while the save waits on a server that has stopped sending (no progress is made then)."""
import hashlib
import http.server
import json
import os
import re
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
import _thread

import onnx_repack
from support import TempDirTest, folder_digest, make_model, sparse_external_model

MiB = 1 << 20

CHILD = textwrap.dedent("""
    import signal, sys, time
    import onnx_repack
    # Ctrl+C raises KeyboardInterrupt even when the suite was started with SIGINT ignored (a
    # background job of a script inherits that, and Python then installs no handler).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    src, out, mode = sys.argv[1:4]
    def progress(done, total, tensor):
        print("progress", done, total, flush=True)
        if mode == "sleepy":
            time.sleep(0.5)  # SIGINT lands here: KeyboardInterrupt inside the callback
    try:
        onnx_repack.save(src, out, size_threshold_bytes=0, progress=progress, rewrite=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(3)
    print("completed", flush=True)
""")


class Cancel(TempDirTest):
    def model(self, tensors=4):
        return sparse_external_model(os.path.join(self.dir, "m"), 64 * MiB, tensors=tensors)

    def assertUntouched(self, before):
        self.assertEqual(folder_digest(os.path.join(self.dir, "m")), before)

    def test_sigint_during_a_save_in_place(self):
        src = self.model()
        before = folder_digest(os.path.join(self.dir, "m"))
        child = subprocess.Popen([sys.executable, "-c", CHILD, src, src, "sleepy"],
                                 stdout=subprocess.PIPE, text=True, env=os.environ)
        first = child.stdout.readline()
        self.assertTrue(first.startswith("progress"), first)
        child.send_signal(signal.SIGINT)
        rest = child.stdout.read()
        child.stdout.close()
        self.assertEqual(child.wait(timeout=120), 3, rest)
        self.assertIn("interrupted", rest)
        self.assertUntouched(before)

    def test_sigint_while_the_core_works(self):
        # Delivered while the GIL is released: the core's progress path checks for signals.
        src = self.model()
        before = folder_digest(os.path.join(self.dir, "m"))
        out = os.path.join(self.dir, "m", "other.onnx")
        started = threading.Event()

        def interrupt():
            started.wait()
            _thread.interrupt_main()

        thread = threading.Thread(target=interrupt)
        # interrupt_main() does nothing while SIGINT is ignored (as in a background job).
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            thread.start()
            with self.assertRaises(KeyboardInterrupt):
                onnx_repack.save(src, out, size_threshold_bytes=0,
                                 progress=lambda *_: started.set())
            thread.join()
        finally:
            signal.signal(signal.SIGINT, previous)
        self.assertUntouched(before)

    def test_an_exception_in_progress_cancels(self):
        src = self.model()
        before = folder_digest(os.path.join(self.dir, "m"))

        class Stop(Exception):
            pass

        def progress(done, total, tensor):
            raise Stop("enough")

        for out in (src, os.path.join(self.dir, "m", "copy.onnx")):
            with self.subTest(out=out):
                with self.assertRaises(Stop):
                    onnx_repack.save(src, out, size_threshold_bytes=0, rewrite=True, progress=progress)
                self.assertUntouched(before)

    def test_a_cancel_token_cancels(self):
        src = self.model(tensors=4)
        before = folder_digest(os.path.join(self.dir, "m"))
        token = onnx_repack.CancelToken()
        token.cancel()
        with self.assertRaises(onnx_repack.Cancelled) as raised:
            onnx_repack.save(src, src, size_threshold_bytes=0, rewrite=True, cancel=token)
        self.assertEqual(raised.exception.kind, "cancelled")
        self.assertUntouched(before)
        event = threading.Event()
        event.set()
        with self.assertRaises(onnx_repack.Cancelled):
            onnx_repack.save(src, src, size_threshold_bytes=0, rewrite=True, cancel=event)
        self.assertUntouched(before)

    def test_the_gil_is_released_while_the_core_works(self):
        src = self.model()
        count = [0]
        done = threading.Event()

        def spin():
            while not done.is_set():
                count[0] += 1

        thread = threading.Thread(target=spin)
        thread.start()
        try:
            before = count[0]
            report = onnx_repack.save(src, os.path.join(self.dir, "m", "gil.onnx"), size_threshold_bytes=0)
            during = count[0] - before
        finally:
            done.set()
            thread.join()
        self.assertGreater(report.seconds, 0.05)
        # Held for the whole save, the other thread would not have run at all meanwhile.
        self.assertGreater(during, 10_000, f"{during} iterations in {report.seconds:.2f} s")

    def test_a_second_save_of_the_folder_is_busy(self):
        src = self.model()
        holding = threading.Event()
        release = threading.Event()

        def slow(*_):
            holding.set()
            release.wait(30)

        def first():
            try:
                onnx_repack.save(src, src, size_threshold_bytes=0, rewrite=True, progress=slow)
            except onnx_repack.Error:
                pass

        thread = threading.Thread(target=first)
        thread.start()
        try:
            self.assertTrue(holding.wait(30))
            with self.assertRaises(onnx_repack.Busy) as raised:
                onnx_repack.save(src, src, size_threshold_bytes=0, rewrite=True, wait=0)
            self.assertEqual(raised.exception.kind, "busy")
            self.assertIn(os.path.join(self.dir, "m"), str(raised.exception))
        finally:
            release.set()
            thread.join()
        self.assertEqual(onnx_repack.verify(src)["ok"], True)

    def test_a_model_being_saved_is_busy_for_other_threads(self):
        src = self.model(tensors=4)
        model = onnx_repack.load(src)
        seen = []

        def other_thread():
            try:
                model.tensors
            except onnx_repack.Busy as error:
                seen.append(error)

        def progress(*_):  # on the saving thread: the model is asked for from another one
            if not seen:
                reader = threading.Thread(target=other_thread)
                reader.start()
                reader.join()

        onnx_repack.save(model, os.path.join(self.dir, "m", "b.onnx"), external_data="b.onnx.data",
                         progress=progress)
        self.assertEqual(len(seen), 1)
        self.assertIsInstance(seen[0], onnx_repack.Busy)


COMMIT = "0123456789abcdef0123456789abcdef01234567"


class StallingServer:
    """A web server on 127.0.0.1 serving `files` ({path: bytes}) at /m/PATH and as the Hub's
    repository org/repo (its tree listing, /org/repo/resolve/REV/PATH): a GET of a data file
    (*.data) sends 100 bytes, then nothing until the client goes or the server stops."""

    def __init__(self, files):
        self.files = files
        self.stalled = threading.Event()
        self.stopping = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_HEAD(self):
                self.answer(body=False)

            def do_GET(self):
                self.answer(body=True)

            def answer(self, body):
                path = self.path.split("?")[0]
                if path.startswith("/api/models/org/repo/tree/"):  # every file, as nginx's
                    listing = [{"type": "file", "size": len(data), "path": name,
                                "oid": hashlib.sha1(data).hexdigest()}
                               for name, data in server.files.items()]
                    return self.send(200, json.dumps(listing).encode(), body, {})
                hub = re.match(r"^/org/repo/resolve/[^/]+/(.+)$", path)
                name = hub.group(1) if hub else path[len("/m/"):] if path.startswith("/m/") else None
                data = server.files.get(name)
                if data is None:
                    return self.send(404, b"no", body, {})
                headers = {"ETag": '"%s"' % hashlib.sha1(data).hexdigest(), "Accept-Ranges": "bytes"}
                if hub:
                    headers["X-Repo-Commit"] = COMMIT
                first, last = 0, len(data) - 1
                asked = re.match(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
                if asked:
                    first, last = int(asked.group(1)), min(int(asked.group(2) or last), last)
                    headers["Content-Range"] = f"bytes {first}-{last}/{len(data)}"
                if not (body and name.endswith(".data")):
                    return self.send(206 if asked else 200, data[first:last + 1], body, headers)
                headers["Content-Length"] = str(last - first + 1)
                self.send_response(206 if asked else 200)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data[first:first + 100])
                self.wfile.flush()
                server.stalled.set()
                while not server.stopping.is_set():  # until the client goes
                    if select.select([self.connection], [], [], 0.05)[0] and not self.connection.recv(1):
                        break
                self.close_connection = True

            def send(self, status, data, body, headers):
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if body:
                    self.wfile.write(data)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path):
        return "http://127.0.0.1:%d/%s" % (self.httpd.server_address[1], path)

    def close(self):
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()


class RemoteCancel(TempDirTest):
    """Ctrl+C while a save from a server waits on it: no chunk is copied then, so no progress
    callback runs, yet the save stops within about a second, leaving nothing new at out."""

    def setUp(self):
        super().setUp()
        source = os.path.join(self.dir, "source")
        make_model(source)
        make_model(os.path.join(source, "onnx"), "decoder_model.onnx")
        files = {}
        for folder, _, names in os.walk(source):
            for name in names:
                with open(os.path.join(folder, name), "rb") as f:
                    files[os.path.relpath(os.path.join(folder, name), source)] = f.read()
        self.server = StallingServer(files)
        self.saved_env = {k: os.environ.get(k) for k in
                          ("HF_ENDPOINT", "HF_HOME", "HF_HUB_CACHE", "HF_TOKEN", "NO_PROXY")}
        os.environ.update({"HF_ENDPOINT": self.server.url("").rstrip("/"),
                           "HF_HOME": os.path.join(self.dir, "hf"),
                           "HF_HUB_CACHE": os.path.join(self.dir, "hf", "hub"),
                           "NO_PROXY": "127.0.0.1,localhost"})
        os.environ.pop("HF_TOKEN", None)
        self.out = os.path.join(self.dir, "out")
        os.makedirs(self.out)
        with open(os.path.join(self.out, "notes.txt"), "w") as f:
            f.write("the user's")

    def tearDown(self):
        self.server.close()
        for k, v in self.saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        super().tearDown()

    def interrupted(self, save):
        """Runs save() with Ctrl+C (SIGINT) once the server stalls; the seconds it took to stop."""
        stopped = []

        def interrupt():
            if self.server.stalled.wait(30):
                stopped.append(time.monotonic())
                _thread.interrupt_main()

        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        thread = threading.Thread(target=interrupt)
        try:
            thread.start()
            with self.assertRaises(KeyboardInterrupt):
                save()
            ended = time.monotonic()
            thread.join()
        finally:
            signal.signal(signal.SIGINT, previous)
        self.assertTrue(stopped, "the server never stalled")
        return ended - stopped[0]

    def assertNothingNew(self):
        self.assertEqual(folder_digest(self.out), {"notes.txt": hashlib.sha1(b"the user's").hexdigest()})
        self.assertEqual(os.listdir(self.out), ["notes.txt"])

    def test_ctrl_c_stops_a_save_of_a_url_that_stalls(self):
        seconds = self.interrupted(lambda: onnx_repack.save(
            self.server.url("m/model.onnx"), os.path.join(self.out, "new", "model.onnx"),
            size_threshold_bytes=0))
        self.assertLess(seconds, 2.0)
        self.assertNothingNew()

    def test_ctrl_c_stops_a_save_folder_of_the_hub_that_stalls(self):
        seconds = self.interrupted(lambda: onnx_repack.save_folder(
            "hf://org/repo/onnx", os.path.join(self.out, "new"), shared_data="model.onnx_data"))
        self.assertLess(seconds, 2.0)
        self.assertNothingNew()


if __name__ == "__main__":
    import unittest
    unittest.main()
