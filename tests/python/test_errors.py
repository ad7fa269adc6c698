"""Refusals raise the exception of their kind with the core's message (file and tensor named),
and nothing is written."""
import os
import re
import shutil
import subprocess
import sys

import numpy as np

import onnx_repack
from support import TempDirTest, folder_digest, make_model, run_cli, tensor_values


class Errors(TempDirTest):
    def test_a_missing_file(self):
        path = os.path.join(self.dir, "missing.onnx")
        with self.assertRaises(onnx_repack.Error) as raised:
            onnx_repack.load(path)
        self.assertIn(path, str(raised.exception))
        self.assertEqual(raised.exception.kind, "not_found")
        # What Python code already catches for a missing file.
        self.assertIsInstance(raised.exception, FileNotFoundError)
        self.assertIsInstance(raised.exception, onnx_repack.NotFound)
        self.assertEqual(str(raised.exception), raised.exception.args[0])
        out = os.path.join(self.dir, "out", "model.onnx")
        with self.assertRaises(FileNotFoundError):
            onnx_repack.save(path, out)
        self.assertEqual(os.listdir(self.dir), [])  # not even the output folder

    def test_a_hostile_model(self):
        path = os.path.join(self.dir, "garbage.onnx")
        with open(path, "wb") as f:
            f.write(b"\xff\xff\xff\xff\x0f" + bytes(range(256)) * 10)
        before = folder_digest(self.dir)
        with self.assertRaises(onnx_repack.Error) as raised:
            onnx_repack.load(path)
        self.assertIn("garbage.onnx", str(raised.exception))
        with self.assertRaises(onnx_repack.Error):
            onnx_repack.save(path, path)
        with self.assertRaises(onnx_repack.Error):
            onnx_repack.verify(path)
        self.assertEqual(folder_digest(self.dir), before)

    def test_a_tensor_whose_data_file_is_missing(self):
        path = make_model(os.path.join(self.dir, "m"))
        os.remove(path + ".data")
        model = onnx_repack.load(path)  # broken references still load
        self.assertTrue(any(p["code"] == "missing-file" for p in model.problems))
        big = next(t for t in model.tensors if t.name == "big")
        with self.assertRaises(onnx_repack.Error) as raised:
            big.numpy()
        self.assertIn("big", str(raised.exception))
        before = folder_digest(self.dir)
        with self.assertRaises(onnx_repack.Error) as raised:
            onnx_repack.save(model, os.path.join(self.dir, "m", "out.onnx"))
        self.assertIn("big", str(raised.exception))
        self.assertEqual(folder_digest(self.dir), before)

    def test_a_refused_alias_name(self):
        path = make_model(os.path.join(self.dir, "m"))
        before = folder_digest(self.dir)
        for data in ("model.onnx", ".", "sub/.."):
            with self.subTest(external_data=data):
                with self.assertRaises(onnx_repack.Error) as raised:
                    onnx_repack.save(path, path, external_data=data, force=True)
                self.assertNotIsInstance(raised.exception, onnx_repack.ConsentRequired)
                # Options that can never work with this model: fix them, do not retry.
                self.assertIsInstance(raised.exception, onnx_repack.UsageError)
                self.assertIn(f"data file '{data}'", str(raised.exception))
                self.assertEqual(folder_digest(self.dir), before)

    def test_consent_names_the_other_models(self):
        folder = os.path.join(self.dir, "m")
        path = make_model(folder)
        shutil.copy(path, os.path.join(folder, "sibling.onnx"))  # reads model.onnx.data too
        before = folder_digest(self.dir)
        with self.assertRaises(onnx_repack.ConsentRequired) as raised:
            onnx_repack.save(path, path, order="size", align=0)
        error = raised.exception
        self.assertEqual(error.kind, "consent_needed")
        self.assertIsInstance(error, FileExistsError)  # a refusal to replace existing files
        self.assertIn("sibling.onnx", str(error))
        self.assertTrue(error.conflicts)
        self.assertTrue(any(u.endswith("sibling.onnx") for c in error.conflicts for u in c["users"]))
        self.assertEqual(folder_digest(self.dir), before)
        report = onnx_repack.save(path, path, order="size", align=0, force=True)
        self.assertFalse(report.unchanged)

    def test_one_table_of_kinds_gives_the_class_and_the_exit_code(self):
        kinds = onnx_repack._core._error_kinds  # the core's kErrorKinds: name -> (class, exit)
        with open(os.path.join(os.path.dirname(onnx_repack.__file__), "__init__.pyi")) as f:
            stub = f.read()
        literal = re.search(r"kind: Literal\[([^\]]*)\]", stub).group(1)
        self.assertEqual(set(re.findall(r'"(\w+)"', literal)), set(kinds))
        for name, (cls, _) in kinds.items():
            self.assertTrue(issubclass(cls, onnx_repack.Error), name)
            self.assertIs(getattr(onnx_repack, cls.__name__), cls)
        # The same failure through both front ends: the class and the exit code of one row.
        path = make_model(os.path.join(self.dir, "m"))
        page = os.path.join(self.dir, "page.onnx")  # what a server may answer in a model's place
        with open(page, "w") as f:
            f.write("<!DOCTYPE html>\n<html><body>Not Found</body></html>\n")
        cases = [
            ("not_found", (os.path.join(self.dir, "nope.onnx"), os.path.join(self.dir, "o.onnx")), {}, []),
            ("format", (page, os.path.join(self.dir, "o.onnx")), {}, []),
            ("usage", (path, os.path.join(self.dir, "o", "m.onnx")), {"external_data": "../x.data"},
             ["--data", "../x.data"]),
        ]
        for kind, (src, out), kwargs, flags in cases:
            with self.subTest(kind=kind):
                cls, exit_code = kinds[kind]
                with self.assertRaises(onnx_repack.Error) as raised:
                    onnx_repack.save(src, out, **kwargs)
                self.assertIs(type(raised.exception), cls)
                self.assertEqual(raised.exception.kind, kind)
                self.assertEqual(run_cli("repack", src, "-o", out, *flags).returncode, exit_code)

    def test_a_refusal_reads_the_same_from_the_cli_and_python(self):
        # One rule in core, one message: only the option's name is each front end's own.
        path = make_model(os.path.join(self.dir, "m"))
        out = os.path.join(self.dir, "out", "m.onnx")
        flag = {"wait": "--wait", "size_threshold_bytes": "--threshold", "align": "--align",
                "order": "--order", "target": "--target", "format": "--format",
                "inline": "--inline", "shard_size": "--shard-size", "dedupe": "--dedupe"}
        for kwargs in ({"wait": "soon"}, {"size_threshold_bytes": "lots"}, {"align": 3000},
                       {"order": "random"}, {"target": "nowhere"}, {"format": "zip"},
                       {"inline": True, "shard_size": 10}, {"format": "safetensors", "dedupe": True}):
            flags = []
            for keyword, value in kwargs.items():
                flags += [flag[keyword]] + ([] if value is True else [str(value)])
            with self.subTest(flags=flags):
                with self.assertRaises(onnx_repack.UsageError) as raised:
                    onnx_repack.save(path, out, **kwargs)
                cli = run_cli("repack", path, "-o", out, *flags)
                self.assertEqual(cli.returncode, 2)
                python_words = str(raised.exception)
                for keyword in kwargs:  # where the message names the option
                    python_words = re.sub(rf"^{keyword}:|\b{keyword}(?= excludes)|(?<=excludes ){keyword}\b",
                                          lambda m: m.group(0).replace(keyword, flag[keyword]), python_words)
                self.assertEqual(cli.stderr.strip(), "onnx-repack: " + python_words)

    def test_usage_errors_name_the_keyword(self):
        path = make_model(os.path.join(self.dir, "m"))
        before = folder_digest(self.dir)
        cases = [
            ({"inline": True, "size_threshold_bytes": 10}, "inline excludes size_threshold_bytes"),
            ({"inline": True, "shard_size": 10}, "inline excludes shard_size"),
            ({"format": "safetensors", "dedupe": True}, "format excludes dedupe"),
            ({"format": "safetensors", "align": 4096}, "align: safetensors files"),
            ({"align": 3000}, "align: '3000' must be 0 or a power of two"),
            ({"size_threshold_bytes": "lots"}, "size_threshold_bytes: 'lots' is not a size"),
            ({"size_threshold_bytes": -1}, "size_threshold_bytes"),
            ({"order": "random"}, "order: 'random'"),
            ({"target": "nowhere"}, "target: 'nowhere' is not a target"),
            ({"format": "zip"}, "format: 'zip'"),
            ({"wait": -1}, "wait: '-1' is not a number of seconds"),
            ({"wait": True}, "wait: 'True' is not a number of seconds"),
            ({"wait": float("nan")}, "wait: 'nan' is not a number of seconds"),
            ({"wait": ""}, "wait: '' is not a number of seconds"),
        ]
        for kwargs, message in cases:
            with self.subTest(kwargs=kwargs):
                with self.assertRaises(onnx_repack.UsageError) as raised:
                    onnx_repack.save(path, os.path.join(self.dir, "out", "m.onnx"), **kwargs)
                self.assertIn(message, str(raised.exception))
                self.assertIsInstance(raised.exception, ValueError)
                self.assertEqual(raised.exception.kind, "usage")
        self.assertEqual(folder_digest(self.dir), before)

    def test_a_bad_plan_names_the_tensor(self):
        path = make_model(os.path.join(self.dir, "m"))
        plan = {"schema": "onnx-repack/plan/1",
                "tensors": [{"scope": "graph", "name": "nope", "storage": "inline"}]}
        with self.assertRaises(onnx_repack.Error) as raised:
            onnx_repack.save(path, os.path.join(self.dir, "out", "m.onnx"), plan=plan)
        self.assertIn("nope", str(raised.exception))
        self.assertFalse(os.path.exists(os.path.join(self.dir, "out")))

    def test_a_stale_handle_is_changed(self):
        path = make_model(os.path.join(self.dir, "m"))
        model = onnx_repack.load(path)
        tensor = model.tensors[0]
        model.load_to_model()
        with self.assertRaises(onnx_repack.Error) as raised:
            tensor.numpy()
        self.assertEqual(raised.exception.kind, "changed")
        # A handle taken again reads the model's values (python-onnx's, from the file).
        fresh = model.tensors[0]
        np.testing.assert_array_equal(fresh.numpy(), tensor_values(path)[fresh.name])

    def test_out_of_memory_is_a_memory_error_naming_the_file(self):
        path = os.path.join(self.dir, "many.onnx")
        # A million unnamed one-element float initializers, written at the wire level.
        def varint(n):
            out = bytearray()
            while n >= 0x80:
                out.append(n & 0x7F | 0x80)
                n >>= 7
            return bytes(out + bytes([n]))

        def field(number, payload):
            return varint(number << 3 | 2) + varint(len(payload)) + payload

        tensor = b"\x08\x01\x10\x01" + field(9, bytes(4))
        graph = field(2, b"g") + field(5, tensor) * 1000000
        with open(path, "wb") as f:
            f.write(b"\x08\x08" + field(7, graph) + field(8, b"\x10\x11"))
        # In a child whose address space may grow by only 100 MB past what it has mapped.
        script = (
            "import resource, sys, onnx_repack\n"
            "used = sum(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmSize'))\n"
            "resource.setrlimit(resource.RLIMIT_AS, ((used + 100000) * 1024,) * 2)\n"
            "for call in (lambda: onnx_repack.load(sys.argv[1]),\n"
            "             lambda: onnx_repack.save(sys.argv[1], sys.argv[1] + '.out.onnx')):\n"
            "    try:\n"
            "        call()\n"
            "        print('no error')\n"
            "    except MemoryError as e:\n"
            "        print(type(e).__name__, isinstance(e, onnx_repack.Error), getattr(e, 'kind', ''), e)\n"
        )
        run = subprocess.run([sys.executable, "-c", script, path], capture_output=True, text=True,
                             env=dict(os.environ), timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr)
        lines = run.stdout.splitlines()
        self.assertEqual(len(lines), 2, run.stdout)
        for line in lines:
            self.assertTrue(line.startswith("OutOfMemory True out_of_memory "), line)
            self.assertIn(path, line)
        self.assertEqual(os.listdir(self.dir), ["many.onnx"])


if __name__ == "__main__":
    import unittest
    unittest.main()
