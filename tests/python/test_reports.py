"""verify, diff, plan and inspect return the documents of the CLI's --json, and save_proto
writes an onnx.ModelProto (inline or external tensors) as save() writes the file it came from."""
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import onnx
import onnx.external_data_helper
import onnx.numpy_helper

import onnx_repack
from support import TempDirTest, folder_digest, make_model, rss_kib, run_cli


class Reports(TempDirTest):
    def setUp(self):
        super().setUp()
        self.path = make_model(os.path.join(self.dir, "m"))

    def cli_json(self, *args):
        result = run_cli(*args, "--json")
        return json.loads(result.stdout)

    def test_python_m_onnx_repack_is_the_cli(self):
        # For installs with no onnx-repack on PATH: same output, same exit codes.
        out = os.path.join(self.dir, "out", "model.onnx")
        for args in (["inspect", self.path], ["inspect", self.path, "--json"],
                     ["verify", self.path], ["plan", self.path, "--keep", "--diff"],
                     ["verify", os.path.join(self.dir, "missing.onnx")],
                     ["repack", self.path, "-o", out, "--threshold", "1", "--keep"], []):
            with self.subTest(args=args):
                ours = subprocess.run([sys.executable, "-m", "onnx_repack", *args],
                                      capture_output=True, text=True, env=os.environ)
                cli = run_cli(*args)
                self.assertEqual((ours.returncode, ours.stdout, ours.stderr),
                                 (cli.returncode, cli.stdout, cli.stderr))
        self.assertFalse(os.path.exists(out))

    def test_inspect_is_the_cli_document(self):
        model = onnx_repack.load(self.path)
        self.assertEqual(model.inspect(), self.cli_json("inspect", self.path))
        self.assertEqual(model.inspect(target="ort"),
                         self.cli_json("inspect", self.path, "--target", "ort"))
        self.assertEqual(model.inspect(deep=True), self.cli_json("inspect", self.path, "--deep"))

    def test_inspect_folder_is_the_cli_document(self):
        # A second graph of the folder with the same "big" weight: one group, one extra copy.
        rng = np.random.default_rng(7)
        big = rng.standard_normal((512, 640)).astype(np.float32)  # make_model's "big"
        graphs = os.path.dirname(self.path)
        make_model(graphs, name="decoder.onnx", tensors={"tied": big})
        folder = onnx_repack.inspect_folder(graphs)
        self.assertEqual(folder, self.cli_json("inspect", graphs))
        self.assertEqual(folder["schema"], "onnx-repack/folder/1")
        self.assertEqual([m["path"] for m in folder["models"]], ["decoder.onnx", "model.onnx"])
        [group] = folder["shared"]
        self.assertEqual(sorted((t["model"], t["name"]) for t in group["tensors"]),
                         [("decoder.onnx", "tied"), ("model.onnx", "big")])
        self.assertEqual(folder["duplicated_bytes"], big.nbytes)
        with self.assertRaises(FileNotFoundError):
            onnx_repack.inspect_folder(os.path.join(self.dir, "missing"))

    def test_save_folder_stores_each_weight_once(self):
        rng = np.random.default_rng(7)
        big = rng.standard_normal((512, 640)).astype(np.float32)  # make_model's "big"
        graphs = os.path.dirname(self.path)
        make_model(graphs, name="decoder.onnx", tensors={"tied": big})
        before = onnx_repack.inspect_folder(graphs)["duplicated_bytes"]
        self.assertEqual(before, big.nbytes)
        expected = {name: {t.name: onnx.numpy_helper.to_array(t)
                           for t in onnx.load(os.path.join(graphs, name)).graph.initializer}
                    for name in ("decoder.onnx", "model.onnx")}
        report = onnx_repack.save_folder(graphs, graphs, shared_data="shared.bin")
        self.assertFalse(report["unchanged"])
        self.assertEqual(report["models"], ["decoder.onnx", "model.onnx"])
        self.assertEqual(sorted(os.path.basename(p) for p in report["removed"]),
                         ["decoder.onnx.data", "model.onnx.data"])
        self.assertEqual(onnx_repack.inspect_folder(graphs)["duplicated_bytes"], 0)
        for name, values in expected.items():
            model = onnx.load(os.path.join(graphs, name))
            for t in model.graph.initializer:
                np.testing.assert_array_equal(onnx.numpy_helper.to_array(t), values[t.name])
        self.assertTrue(onnx_repack.save_folder(graphs, graphs, shared_data="shared.bin")["unchanged"])
        with self.assertRaises(ValueError):  # a data file may not be named .onnx
            onnx_repack.save_folder(graphs, graphs, shared_data="x.onnx")
        # Without shared_data each graph gets its own data file again.
        report = onnx_repack.save_folder(graphs, os.path.join(self.dir, "each"),
                                         size_threshold_bytes=1024)
        self.assertEqual(sorted(os.listdir(os.path.join(self.dir, "each"))),
                         ["decoder.onnx", "decoder.onnx.data", "model.onnx", "model.onnx.data"])
        self.assertEqual(report["models"], ["decoder.onnx", "model.onnx"])

    def test_verify_is_the_cli_document(self):
        self.assertEqual(onnx_repack.verify(self.path), self.cli_json("verify", self.path))
        self.assertTrue(onnx_repack.verify(self.path)["ok"])
        with open(self.path + ".data", "r+b") as f:
            f.truncate(1000)  # cut the data short
        report = onnx_repack.verify(self.path)
        self.assertFalse(report["ok"])
        self.assertEqual(report, self.cli_json("verify", self.path))

    def test_diff_is_the_cli_document(self):
        out = os.path.join(self.dir, "o", "model.onnx")
        onnx_repack.save(self.path, out, order="size")
        self.assertEqual(onnx_repack.diff(self.path, out), self.cli_json("diff", self.path, out))
        self.assertEqual(onnx_repack.diff(onnx_repack.load(self.path), out)["content_changed"], [])

    def test_plan_diff(self):
        ours = onnx_repack.plan(self.path, diff=True, size_threshold_bytes="1MiB")
        self.assertEqual(ours, self.cli_json("plan", self.path, "--diff", "--threshold", "1MiB"))
        before = folder_digest(self.dir)
        onnx_repack.plan(self.path, output=os.path.join(self.dir, "new", "x.onnx"))
        self.assertEqual(folder_digest(self.dir), before)  # a plan writes nothing

    def test_compact_closes_orphaned_bytes(self):
        # 12345 stale bytes before w in w.bin: the audit warns (orphaned-bytes), and
        # save(compact=...) closes them keeping w's values; compact goes with keeping placement.
        values = np.arange(4096, dtype=np.float32)
        folder = os.path.join(self.dir, "o")
        os.makedirs(folder)
        with open(os.path.join(folder, "w.bin"), "wb") as f:
            f.write(b"\x55" * 12345 + values.tobytes())
        t = onnx.numpy_helper.from_array(values, "w")
        onnx.external_data_helper.set_external_data(t, "w.bin", offset=12345, length=values.nbytes)
        t.data_location = onnx.TensorProto.EXTERNAL
        t.ClearField("raw_data")
        y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [4096])
        graph = onnx.helper.make_graph([onnx.helper.make_node("Identity", ["w"], ["y"])], "g", [], [y],
                                       initializer=[t])
        model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
        model.ir_version = 8
        path = os.path.join(folder, "model.onnx")
        onnx.save_model(model, path)

        def codes():
            return [p["code"] for p in onnx_repack.load(path).inspect()["problems"]]

        self.assertIn("orphaned-bytes", codes())
        with self.assertRaises(onnx_repack.UsageError):
            onnx_repack.save(path, path, external_data="w.bin", compact="w.bin")
        onnx_repack.save(path, path, compact=["w.bin"])
        self.assertEqual(os.path.getsize(os.path.join(folder, "w.bin")), values.nbytes)
        self.assertNotIn("orphaned-bytes", codes())
        np.testing.assert_array_equal(onnx.numpy_helper.to_array(onnx.load(path).graph.initializer[0]),
                                      values)

    def test_layout_lists_the_regions(self):
        [layout] = onnx_repack.load(self.path).layout()
        self.assertEqual(layout["location"], "model.onnx.data")
        self.assertEqual(layout["bytes"], os.path.getsize(self.path + ".data"))
        tensors = [r for r in layout["regions"] if r["type"] == "tensor"]
        self.assertIn("graph/big", [r["tensor"] for r in tensors])

    def test_save_proto_of_inline_and_external_tensors(self):
        reference = os.path.join(self.dir, "ref", "model.onnx")
        onnx_repack.save(self.path, reference)
        # External tensors relative to base_dir, read by the core from the files.
        proto = onnx.load(self.path, load_external_data=False)
        out = os.path.join(self.dir, "p1", "model.onnx")
        onnx_repack.save_proto(proto, out, base_dir=os.path.dirname(self.path))
        self.assertEqual(folder_digest(os.path.dirname(out)), folder_digest(os.path.dirname(reference)))
        # Everything in memory: kept inline without a layout keyword, as ir.save; laid out as
        # the reference with the same keywords.
        proto = onnx.load(self.path)
        out = os.path.join(self.dir, "p2", "model.onnx")
        report = onnx_repack.save_proto(proto, out)
        self.assertEqual(report.warnings, [])
        self.assertEqual(os.listdir(os.path.dirname(out)), ["model.onnx"])
        self.assertEqual(report.external_tensors, 0)
        reference = os.path.join(self.dir, "ref2", "model.onnx")
        onnx_repack.save(self.path, reference, size_threshold_bytes="1KiB")
        out = os.path.join(self.dir, "p2b", "model.onnx")
        onnx_repack.save_proto(proto, out, size_threshold_bytes="1KiB")
        self.assertEqual(folder_digest(os.path.dirname(out)), folder_digest(os.path.dirname(reference)))
        # Options as save() takes them; nothing temporary is left.
        out = os.path.join(self.dir, "p3", "model.onnx")
        onnx_repack.save_proto(proto, out, inline=True)
        self.assertEqual(os.listdir(os.path.dirname(out)), ["model.onnx"])
        with self.assertRaises(onnx_repack.UsageError):
            onnx_repack.save_proto(proto, out, inline=True, shard_size=10)
        with self.assertRaises(onnx_repack.UsageError):
            onnx_repack.save_proto(b"not a proto", out)

    def test_save_proto_without_base_dir_resolves_against_the_output_folder(self):
        proto = onnx.load(self.path, load_external_data=False)
        with self.assertRaises(onnx_repack.Error) as raised:
            onnx_repack.save_proto(proto, os.path.join(self.dir, "p4", "model.onnx"))
        self.assertIn("model.onnx.data", str(raised.exception))
        self.assertFalse(os.path.exists(os.path.join(self.dir, "p4")))


    def test_a_saved_proto_is_left_as_it_was(self):
        # The core reads its payloads from it while it saves: unchanged after a save, a refusal
        # and a cancel alike, in every place a tensor can be (attribute, subgraph, sparse, function).
        proto = onnx.load(self.path)
        big = np.arange(4096, dtype=np.float32)
        branch = onnx.helper.make_graph(
            [onnx.helper.make_node("Identity", ["sub_w"], ["o"])], "branch", [],
            [onnx.helper.make_tensor_value_info("o", onnx.TensorProto.FLOAT, [4096])],
            [onnx.numpy_helper.from_array(big + 1, "sub_w")])
        proto.graph.node.append(onnx.helper.make_node(
            "If", ["cond"], ["if_out"], then_branch=branch, else_branch=branch))
        proto.graph.sparse_initializer.append(onnx.helper.make_sparse_tensor(
            onnx.numpy_helper.from_array(big + 2, "sparse"),
            onnx.numpy_helper.from_array(np.arange(4096, dtype=np.int64), "sparse_i"), [8192]))
        proto.functions.append(onnx.helper.make_function(
            "local", "f", [], ["y"], [onnx.helper.make_node(
                "Constant", [], ["y"], value=onnx.numpy_helper.from_array(big + 3))],
            [onnx.helper.make_opsetid("", 17)]))
        before = proto.SerializeToString()
        out = os.path.join(self.dir, "lent", "model.onnx")
        report = onnx_repack.save(proto, out, size_threshold_bytes="1KiB")
        self.assertEqual(proto.SerializeToString(), before)
        saved = onnx.load(out, load_external_data=False)
        for tensor in (saved.graph.node[-1].attribute[0].g.initializer[0],
                       saved.graph.sparse_initializer[0].values, saved.functions[0].node[0].attribute[0].t):
            self.assertEqual(tensor.data_location, onnx.TensorProto.EXTERNAL)
        self.assertGreater(report.external_tensors, 6)
        for name, value in (("sub_w", big + 1), ("sparse", big + 2)):
            self.assertEqual(
                next(t for t in onnx_repack.load(out).tensors if t.name == name).numpy().tolist(),
                value.tolist())
        with self.assertRaises(onnx_repack.ConsentRequired):
            onnx_repack.save(proto, out, size_threshold_bytes="2KiB")  # files no model uses
        self.assertEqual(proto.SerializeToString(), before)

        def cancel(done, total, tensor):
            raise KeyboardInterrupt

        with self.assertRaises(KeyboardInterrupt):
            onnx_repack.save(proto, os.path.join(self.dir, "c", "m.onnx"), size_threshold_bytes=0,
                             progress=cancel)
        self.assertEqual(proto.SerializeToString(), before)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "c")))

    def test_a_proto_being_saved_is_seen_whole_by_the_callback_and_other_threads(self):
        # The proto is only read (issue 37): its payloads never leave it, so what the progress
        # callback or another thread reads during the save is the proto itself, and a save
        # that fails midway leaves it as it was.
        proto = onnx.load(self.path)
        before = proto.SerializeToString()
        seen = {"callback": 0, "thread": 0, "changed": []}

        def progress(done, total, tensor):
            seen["callback"] += 1
            if proto.SerializeToString() != before:
                seen["changed"].append(f"callback at {done}/{total} ({tensor})")

        stop = threading.Event()

        def reader():
            while not stop.is_set():
                seen["thread"] += 1
                if proto.SerializeToString() != before:
                    seen["changed"].append("another thread")
                time.sleep(0.001)

        thread = threading.Thread(target=reader)
        thread.start()
        try:
            for i in range(5):
                onnx_repack.save(proto, os.path.join(self.dir, f"whole{i}", "model.onnx"),
                                 size_threshold_bytes="1KiB", progress=progress)
        finally:
            stop.set()
            thread.join()
        self.assertGreater(seen["callback"], 0)
        self.assertGreater(seen["thread"], 0)
        self.assertEqual(seen["changed"], [])
        self.assertEqual(proto.SerializeToString(), before)
        # A save that cannot write (a file where its folder would be) leaves it whole too.
        blocker = os.path.join(self.dir, "blocker")
        with open(blocker, "w") as f:
            f.write("not a folder")
        with self.assertRaises(onnx_repack.UsageError):
            onnx_repack.save(proto, os.path.join(blocker, "model.onnx"), size_threshold_bytes="1KiB")
        self.assertEqual(proto.SerializeToString(), before)
        # Nor does one stopped halfway through its payloads (the callback raises).
        calls = []

        def fail(done, total, tensor):
            calls.append(done)
            if done:
                raise ValueError("stop here")

        with self.assertRaises(ValueError):
            onnx_repack.save(proto, os.path.join(self.dir, "half", "model.onnx"),
                             size_threshold_bytes="1KiB", progress=fail)
        self.assertLess(calls[-1], os.path.getsize(self.path + ".data"))
        self.assertEqual(proto.SerializeToString(), before)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "half")))

    def test_a_payload_changed_while_the_proto_saves_is_refused(self):
        # The payloads are read from the proto as they are written: one whose length changed
        # since the save began would not fit the model written around it.
        proto = onnx.load(self.path)
        last = next(t for t in proto.graph.initializer if t.name == "big2")

        def change(done, total, tensor):
            last.raw_data = b"\0" * 8

        with self.assertRaises(onnx_repack.Error) as raised:
            onnx_repack.save(proto, os.path.join(self.dir, "changed", "model.onnx"),
                             size_threshold_bytes="1KiB", order="declaration", progress=change)
        self.assertIn("changed while it was saved", str(raised.exception))
        self.assertFalse(os.path.exists(os.path.join(self.dir, "changed")))

    def test_a_proto_with_fields_this_onnx_does_not_know_saves(self):
        # A model from a newer onnx read by this one keeps the fields it does not know as
        # unknown fields; a message holding some is written whole, its payloads with it, and
        # the save reads those from that copy instead of refusing the model.
        proto = onnx.load(self.path)
        unknown = b"\xf8\x07\x01"  # field 127, varint 1: no field of GraphProto
        graph = onnx.GraphProto()
        graph.ParseFromString(proto.graph.SerializeToString() + unknown)
        proto.graph.CopyFrom(graph)
        before = proto.SerializeToString()
        out = os.path.join(self.dir, "unknown", "model.onnx")
        onnx_repack.save(proto, out, size_threshold_bytes="1KiB")
        self.assertEqual(proto.SerializeToString(), before)
        saved = onnx.load(out)
        self.assertIn(unknown, saved.graph.SerializeToString())
        for tensor in proto.graph.initializer:
            mine = next(t for t in saved.graph.initializer if t.name == tensor.name)
            np.testing.assert_array_equal(onnx.numpy_helper.to_array(mine),
                                          onnx.numpy_helper.to_array(tensor))

    def test_a_proto_saves_without_a_second_copy_of_its_weights(self):
        # Serialized whole, a proto took three times its size (SerializeToString's bytes, a
        # copy, the core's parse); payloads go from the proto to the file. 96 MiB of weights in memory:
        # the save may add the largest tensor (16 MiB) and the core's buffers.
        rng = np.random.default_rng(3)
        weights = [onnx.numpy_helper.from_array(rng.standard_normal(4 << 20).astype(np.float32), f"w{i}")
                   for i in range(6)]
        proto = onnx.helper.make_model(onnx.helper.make_graph([], "g", [], [], weights))
        del weights
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS
        base = rss_kib()
        onnx_repack.save(proto, os.path.join(self.dir, "big", "model.onnx"), external_data="w.bin")
        with open("/proc/self/status") as f:
            peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
        self.assertLess(peak - base, 48 * 1024, f"the save added {(peak - base) // 1024} MiB")

if __name__ == "__main__":
    import unittest
    unittest.main()
