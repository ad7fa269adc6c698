"""Ctrl+C and an exception in the progress callback cancel a save through the core's cancel
token: the originals stay byte-identical, no temporary is left, and the exception is raised."""
import os
import signal
import subprocess
import sys
import textwrap
import threading
import _thread

import onnx_repack
from support import TempDirTest, folder_digest, sparse_external_model

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


if __name__ == "__main__":
    import unittest
    unittest.main()
