"""Every save mode gives files python-onnx reads with equal values, byte-identical to what
`onnx-repack repack` writes with the same options: one set of defaults and rules, the core's."""
import json
import os
import shutil
import unittest
import warnings

import onnx

import onnx_repack
from support import TempDirTest, folder_digest, make_model, run_cli, tensor_values

# (name, keyword arguments of save(), the CLI's flags)
MODES = [
    # No layout keyword keeps every tensor where it is (ir.save(model, path)): `repack --keep`.
    ("keep", {}, ["--keep"]),
    ("repack's defaults", {"size_threshold_bytes": "1KiB"}, []),
    ("threshold", {"size_threshold_bytes": 100_000}, ["--threshold", "100000"]),
    ("threshold text", {"size_threshold_bytes": "1MiB", "align": 0}, ["--threshold", "1MiB", "--align", "0"]),
    ("inline", {"inline": True}, ["--inline"]),
    ("shard", {"shard_size": 2_000_000}, ["--shard-size", "2000000"]),
    ("target web", {"target": "web"}, ["--target", "web"]),
    ("target ort", {"target": "ort"}, ["--target", "ort"]),
    ("safetensors", {"format": "safetensors"}, ["--format", "safetensors"]),
    ("dedupe", {"dedupe": True}, ["--dedupe"]),
    ("checksum", {"checksum": True, "size_threshold_bytes": "1KiB"}, ["--checksum"]),
    ("keep with checksums", {"checksum": True}, ["--keep", "--checksum"]),
    ("order size", {"order": "size", "align": 65536, "align_threshold": 4096},
     ["--order", "size", "--align", "64KiB", "--align-threshold", "4096"]),
    # external_data alone: onnx_ir's threshold, 256 bytes (the CLI's is 1 KiB).
    ("no attributes", {"attributes": False, "external_data": "weights.bin"},
     ["--no-attributes", "--data", "weights.bin", "--threshold", "256"]),
]


class RoundTrip(TempDirTest):
    def source(self, external=True):
        src = make_model(os.path.join(self.dir, "src"), external=external)
        return src, tensor_values(src)

    def check_mode(self, kwargs, flags, external=True):
        src, values = self.source(external)
        py_out = os.path.join(self.dir, "py", "model.onnx")
        cli_out = os.path.join(self.dir, "cli", "model.onnx")
        report = onnx_repack.save(src, py_out, **kwargs)
        self.assertEqual(report.warnings, [])
        result = run_cli("repack", src, "-o", cli_out, *flags)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertSameValues(values, py_out)
        onnx.checker.check_model(py_out)
        py_files, cli_files = folder_digest(os.path.dirname(py_out)), folder_digest(os.path.dirname(cli_out))
        self.assertEqual(py_files, cli_files)
        return report

    def test_every_mode_matches_the_cli(self):
        for name, kwargs, flags in MODES:
            for external in (True, False):
                with self.subTest(mode=name, source="external" if external else "inline"):
                    self.check_mode(kwargs, flags, external)
                    shutil.rmtree(self.dir)
                    os.makedirs(self.dir)

    def test_a_tensor_past_the_shard_size_is_named(self):
        # It gets a file of its own, bigger than asked: the report and the CLI say so.
        src, values = self.source()
        out = os.path.join(self.dir, "py", "model.onnx")
        report = onnx_repack.save(src, out, shard_size=1_000_000)
        self.assertSameValues(values, out)
        self.assertEqual(len(report.warnings), 2, report.warnings)
        for name, warning in zip(("big", "big2"), sorted(report.warnings)):
            self.assertIn(f"graph/{name} ", warning)
            self.assertIn("shard size", warning)
        result = run_cli("repack", src, "-o", os.path.join(self.dir, "cli", "model.onnx"),
                         "--shard-size", "1000000")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("warning: graph/big ", result.stderr)

    def test_shards_are_named_like_onnx_ir(self):
        report = self.check_mode({"shard_size": 2_000_000}, ["--shard-size", "2000000"])
        names = sorted(os.path.basename(f) for f in report.data_files)
        self.assertGreater(len(names), 1)
        # onnx_ir 1.1's rule: the marker before the whole extension chain.
        self.assertEqual(names, [f"model-{i:05d}-of-{len(names):05d}.onnx.data" for i in range(1, len(names) + 1)])

    def test_plan_matches_the_cli(self):
        src, values = self.source()
        plan = onnx_repack.plan(src, size_threshold_bytes=1024)
        # Pin one large tensor inline and one small tensor to a file of its own.
        for t in plan["tensors"]:
            if t["name"] == "big2":
                t["storage"] = "inline"
                t.pop("location", None)
            if t["name"] == "small":
                t["storage"] = "external"
                t["location"] = "pinned.bin"
        plan_file = os.path.join(self.dir, "plan.json")
        with open(plan_file, "w") as f:
            json.dump(plan, f)
        py_out = os.path.join(self.dir, "py", "model.onnx")
        cli_out = os.path.join(self.dir, "cli", "model.onnx")
        onnx_repack.save(src, py_out, plan=plan)
        result = run_cli("repack", src, "-o", cli_out, "--plan", plan_file)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertSameValues(values, py_out)
        self.assertEqual(folder_digest(os.path.dirname(py_out)), folder_digest(os.path.dirname(cli_out)))
        # The plan given as its file's path reads the same.
        path_out = os.path.join(self.dir, "path", "model.onnx")
        onnx_repack.save(src, path_out, plan=plan_file)
        self.assertEqual(folder_digest(os.path.dirname(py_out)), folder_digest(os.path.dirname(path_out)))
        placed = {t.name: t for t in onnx_repack.load(py_out).tensors}
        self.assertEqual(placed["big2"].storage, "inline")
        self.assertEqual(placed["small"].location, "pinned.bin")

    def test_plan_matches_the_cli_plan_json(self):
        src, _ = self.source()
        for kwargs, flags in (({}, ["--keep"]), ({"shard_size": "1MB"}, ["--shard-size", "1MB"]),
                              ({"target": "web"}, ["--target", "web"])):
            with self.subTest(flags=flags):
                ours = onnx_repack.plan(src, **kwargs)
                result = run_cli("plan", src, "--json", *flags)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertEqual(ours, json.loads(result.stdout))

    def test_model_object_saves_like_a_path(self):
        src, values = self.source()
        model = onnx_repack.load(src)
        out = os.path.join(self.dir, "obj", "model.onnx")
        onnx_repack.save(model, out, size_threshold_bytes=4096)
        by_path = os.path.join(self.dir, "path", "model.onnx")
        onnx_repack.save(src, by_path, size_threshold_bytes=4096)
        self.assertEqual(folder_digest(os.path.dirname(out)), folder_digest(os.path.dirname(by_path)))
        # The model now describes the saved files.
        self.assertEqual(model.path, os.path.abspath(out))
        self.assertTrue(all(t.location in (None, "model.onnx.data") for t in model.tensors))
        self.assertSameValues(values, out)

    def test_wait_as_long_as_it_takes(self):
        # The core's parser reads float("inf") as the CLI's --wait inf: no lock is held, so
        # the save goes ahead at once.
        src, values = self.source()
        out = os.path.join(self.dir, "w", "model.onnx")
        onnx_repack.save(src, out, size_threshold_bytes=4096, wait=float("inf"))
        self.assertSameValues(values, out)

    def test_report_says_what_was_written(self):
        src, _ = self.source()
        out = os.path.join(self.dir, "r", "model.onnx")
        report = onnx_repack.save(src, out)
        self.assertEqual(report.model_path, os.path.abspath(out))
        self.assertEqual(report.data_files, [os.path.abspath(out) + ".data"])
        sizes = os.path.getsize(out) + os.path.getsize(out + ".data")
        self.assertEqual(report.bytes_written, sizes)
        self.assertEqual(report.external_tensors + report.inline_tensors, 7)
        again = onnx_repack.save(out, out)
        self.assertTrue(again.unchanged)
        self.assertEqual(again.bytes_written, 0)
        self.assertFalse(onnx_repack.save(out, out, rewrite=True).unchanged)

    def test_a_note_of_the_core_is_one_python_warning(self):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.check_mode({"target": "ort", "format": "safetensors"},
                            ["--target", "ort", "--format", "safetensors"])
        self.assertEqual([str(w.message) for w in caught if "aligns tensors" in str(w.message)],
                         ["target ort aligns tensors of 1MiB and more to 64KiB; safetensors files "
                          "hold tensors back to back, so this save does not (format onnx can)"])

    def test_progress_is_called(self):
        src, _ = self.source()
        calls = []
        onnx_repack.save(src, os.path.join(self.dir, "p", "model.onnx"),
                         progress=lambda done, total, tensor: calls.append((done, total, tensor)))
        self.assertTrue(calls)
        self.assertEqual(calls[-1][0], calls[-1][1])
        self.assertTrue(all(isinstance(c[2], str) for c in calls))


if __name__ == "__main__":
    unittest.main()
