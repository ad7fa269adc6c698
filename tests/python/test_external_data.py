"""What python-onnx's and onnx_ir's external-data tests check, through onnx_repack: re-saving
in place, saving elsewhere, thresholds, subfolders, back inline, base directory changes, and
the five operations of SPEC 4."""
import os
import shutil

import numpy as np
import onnx
from onnx import numpy_helper

import onnx_repack
from support import (TempDirTest, cached_share, drops_clean_pages, folder_digest, make_model,
                     rss_kib, tensor_values)


class ExternalData(TempDirTest):
    def setUp(self):
        super().setUp()
        self.path = make_model(os.path.join(self.dir, "m"))
        self.values = tensor_values(self.path)

    def test_saving_twice_in_place_never_grows_the_data_file(self):
        onnx_repack.save(self.path, self.path, size_threshold_bytes=0, rewrite=True)
        size = os.path.getsize(self.path + ".data")
        for _ in range(3):
            onnx_repack.save(self.path, self.path, size_threshold_bytes=0, rewrite=True)
            self.assertEqual(os.path.getsize(self.path + ".data"), size)
        self.assertSameValues(self.values, self.path)
        self.assertEqual(onnx_repack.verify(self.path)["ok"], True)
        # The same Model object saved twice over itself.
        model = onnx_repack.load(self.path)
        onnx_repack.save(model, self.path, order="size", align=0)
        onnx_repack.save(model, self.path, order="declaration")
        self.assertSameValues(self.values, self.path)
        self.assertEqual(sorted(os.listdir(os.path.dirname(self.path))), ["model.onnx", "model.onnx.data"])

    def test_saving_to_a_new_path_keeps_the_old_model_valid(self):
        before = folder_digest(os.path.dirname(self.path))
        model = onnx_repack.load(self.path)
        out = os.path.join(self.dir, "new", "copy.onnx")
        onnx_repack.save(model, out)
        self.assertEqual(folder_digest(os.path.dirname(self.path)), before)
        self.assertSameValues(self.values, self.path)
        self.assertSameValues(self.values, out)
        self.assertEqual(model.path, os.path.abspath(out))
        # No layout keyword: every tensor keeps its place, its data file's name too.
        self.assertEqual(sorted(os.listdir(os.path.dirname(out))), ["copy.onnx", "model.onnx.data"])
        # And back: the new model saved over the old path.
        onnx_repack.save(model, self.path, force=True)
        self.assertSameValues(self.values, self.path)

    def test_a_proto_resaved_over_its_own_path(self):
        # docs/python.md's recipe: the proto's own data file, which no other model reads.
        folder = os.path.dirname(self.path)
        proto = onnx.load(self.path, load_external_data=False)
        onnx_repack.save_proto(proto, self.path, base_dir=folder)
        self.assertSameValues(self.values, self.path)
        self.assertEqual(sorted(os.listdir(folder)), ["model.onnx", "model.onnx.data"])
        # Another model reading that file is named, with Python's keyword for consent.
        shutil.copy(self.path, os.path.join(folder, "other.onnx"))
        proto = onnx.load(self.path, load_external_data=False)
        with self.assertRaises(onnx_repack.ConsentRequired) as raised:
            onnx_repack.save_proto(proto, self.path, base_dir=folder, align=0)
        self.assertEqual(raised.exception.conflicts[0]["users"], [os.path.join(folder, "other.onnx")])
        self.assertIn("other.onnx", str(raised.exception))
        self.assertIn("force=True", str(raised.exception))
        self.assertNotIn("--force", str(raised.exception))
        self.assertSameValues(self.values, os.path.join(folder, "other.onnx"))

    def test_a_data_file_no_longer_used_is_named_and_removed_on_request(self):
        report = onnx_repack.save(self.path, self.path, external_data="renamed.data")
        self.assertEqual([os.path.basename(f) for f in report.no_longer_used], ["model.onnx.data"])
        self.assertEqual(report.removed, [])
        self.assertTrue(os.path.exists(self.path + ".data"))
        report = onnx_repack.save(self.path, self.path, external_data="again.data", remove_unused=True)
        self.assertEqual([os.path.basename(f) for f in report.removed], ["renamed.data"])
        self.assertFalse(os.path.exists(os.path.join(os.path.dirname(self.path), "renamed.data")))
        self.assertSameValues(self.values, self.path)

    def test_thresholds(self):
        sizes = {t.name: t.nbytes for t in onnx_repack.load(self.path).tensors}
        for threshold in (0, 40, 8192, 1 << 20, 1 << 30):
            with self.subTest(threshold=threshold):
                out = os.path.join(self.dir, f"t{threshold}", "model.onnx")
                onnx_repack.save(self.path, out, size_threshold_bytes=threshold)
                for t in onnx_repack.load(out).tensors:
                    external = sizes[t.name] >= threshold and sizes[t.name] > 0
                    self.assertEqual(t.storage, "external" if external else "inline", t.name)
                self.assertSameValues(self.values, out)
                if threshold == 1 << 30:
                    self.assertFalse(os.path.exists(out + ".data"))

    def test_no_layout_keyword_keeps_every_tensor_where_it_is(self):
        # ir.save(model, path) "saved unmodified": inline stays inline, external stays put.
        def places(path):
            return {t.name: (t.storage, t.location, t.offset) for t in onnx_repack.load(path).tensors}
        before = places(self.path)
        digest = folder_digest(os.path.dirname(self.path))
        report = onnx_repack.save(self.path, self.path)
        self.assertTrue(report.unchanged)
        self.assertEqual(folder_digest(os.path.dirname(self.path)), digest)
        out = os.path.join(self.dir, "elsewhere", "model.onnx")
        onnx_repack.save(self.path, out)
        self.assertEqual(places(out), before)
        self.assertSameValues(self.values, out)
        # A proto in memory (onnx.load reads the data in) stays inline.
        out = os.path.join(self.dir, "proto", "model.onnx")
        onnx_repack.save(onnx.load(self.path), out)
        self.assertEqual({s for s, _, _ in places(out).values()}, {"inline"})
        self.assertSameValues(self.values, out)

    def test_seed_threshold_defaults_are_onnx_irs(self):
        # ir.save(..., external_data=...) offloads from 256 bytes; unload_from_model from 0.
        path = make_model(os.path.join(self.dir, "d"), external=False, constant=False, tensors={
            "w336": np.ones(84, np.float32), "w200": np.ones(50, np.float32),
            "w8": np.ones(2, np.float32)})
        out = os.path.join(self.dir, "d2", "model.onnx")
        onnx_repack.save(path, out, external_data="w.bin")
        storage = {t.name: t.storage for t in onnx_repack.load(out).tensors}
        self.assertEqual(storage, {"w336": "external", "w200": "inline", "w8": "inline"})
        model = onnx_repack.load(path)
        moved = os.path.join(self.dir, "d3")
        os.makedirs(moved)
        model.unload_from_model(moved, "all.bin")
        self.assertEqual({t.name: t.storage for t in model.tensors},
                         {"w336": "external", "w200": "external", "w8": "external"})

    def test_save_takes_a_model_proto(self):
        proto = onnx.load(self.path)
        out = os.path.join(self.dir, "p", "model.onnx")
        report = onnx_repack.save(proto, out, external_data="w.bin")
        self.assertEqual(report.model_path, os.path.abspath(out))
        self.assertSameValues(self.values, out)

    def test_external_with_inline_data_is_read_from_its_file(self):
        # What numpy_helper.to_array(t, base_dir) leaves: onnx's rule is that the file wins.
        folder = os.path.dirname(self.path)
        proto = onnx.load(self.path, load_external_data=False)
        big = next(t for t in proto.graph.initializer if t.name == "big")
        big.raw_data = bytes(len(self.values["big"].tobytes()))  # zeros, not the file's values
        model_path = os.path.join(folder, "both.onnx")
        with open(model_path, "wb") as f:  # onnx.save_model would write raw_data to the file
            f.write(proto.SerializeToString())
        problems = onnx_repack.load(model_path).problems
        self.assertEqual([(p["code"], p["severity"]) for p in problems],
                         [("external-with-data", "warning")])
        model = onnx_repack.load(model_path)
        np.testing.assert_array_equal(
            next(t for t in model.tensors if t.name == "big").numpy(), self.values["big"])
        for what, save in (
                ("save_proto", lambda out: onnx_repack.save_proto(proto, out, base_dir=folder)),
                ("save", lambda out: onnx_repack.save(model_path, out)),
                ("inline", lambda out: onnx_repack.save(model_path, out, inline=True))):
            with self.subTest(what):
                out = os.path.join(self.dir, what, "model.onnx")
                save(out)
                self.assertSameValues(self.values, out)
                self.assertEqual(onnx_repack.load(out).problems, [])

    def test_zero_byte_tensors_stay_inline(self):
        path = make_model(os.path.join(self.dir, "z"), tensors={
            "empty": np.zeros((0, 4), np.float32), "w": np.ones(1000, np.float32)})
        out = os.path.join(self.dir, "z2", "model.onnx")
        onnx_repack.save(path, out, size_threshold_bytes=0)
        storage = {t.name: t.storage for t in onnx_repack.load(out).tensors}
        self.assertEqual(storage["empty"], "inline")
        self.assertEqual(storage["w"], "external")

    def test_subfolder_locations(self):
        out = os.path.join(self.dir, "s", "model.onnx")
        # As python-onnx, the data's folder must exist: a save makes only the model's.
        with self.assertRaises(onnx_repack.Error) as raised:
            onnx_repack.save(self.path, out, external_data="weights/all.bin")
        self.assertIn("weights does not exist", str(raised.exception))
        self.assertFalse(os.path.exists(os.path.join(self.dir, "s")))
        os.makedirs(os.path.join(self.dir, "s", "weights"))
        onnx_repack.save(self.path, out, external_data="weights/all.bin")
        self.assertTrue(os.path.isfile(os.path.join(self.dir, "s", "weights", "all.bin")))
        locations = {t.location for t in onnx_repack.load(out).tensors if t.storage == "external"}
        self.assertEqual(locations, {"weights/all.bin"})
        self.assertSameValues(self.values, out)
        onnx.checker.check_model(out)

    def test_back_inline(self):
        out = os.path.join(self.dir, "i", "model.onnx")
        onnx_repack.save(self.path, out, inline=True)
        self.assertEqual(os.listdir(os.path.dirname(out)), ["model.onnx"])
        self.assertTrue(all(t.storage == "inline" for t in onnx_repack.load(out).tensors))
        self.assertSameValues(self.values, out)
        # load_to_model brings the bytes in; the save then writes them inline too.
        model = onnx_repack.load(self.path)
        model.load_to_model()
        self.assertTrue(all(t.storage == "inline" for t in model.tensors))
        out2 = os.path.join(self.dir, "i2", "model.onnx")
        onnx_repack.save(model, out2, size_threshold_bytes=1 << 40)
        self.assertSameValues(self.values, out2)

    def test_base_dir_changes(self):
        moved = os.path.join(self.dir, "elsewhere")
        os.makedirs(moved)
        shutil.move(self.path + ".data", os.path.join(moved, "model.onnx.data"))
        model = onnx_repack.load(self.path)
        self.assertTrue(any(p["code"] == "missing-file" for p in model.problems))
        model.set_base_dir(moved)
        self.assertEqual(model.base_dir, moved)
        self.assertEqual([p for p in model.problems if p["severity"] == "error"], [])
        big = next(t for t in model.tensors if t.name == "big")
        np.testing.assert_array_equal(big.numpy(), self.values["big"])
        out = os.path.join(self.dir, "rebased", "model.onnx")
        onnx_repack.save(model, out)
        self.assertSameValues(self.values, out)

    def test_unload_from_model(self):
        model = onnx_repack.load(self.path)
        model.load_to_model()
        target = os.path.join(self.dir, "u")
        os.makedirs(target)
        model.unload_from_model(target, "weights.bin", 4096)
        self.assertTrue(os.path.isfile(os.path.join(target, "weights.bin")))
        for t in model.tensors:
            self.assertEqual(t.storage, "external" if t.nbytes >= 4096 else "inline", t.name)
            np.testing.assert_array_equal(
                t.numpy(), self.values[t.name if t.kind == "initializer" else "const.value"])
        out = os.path.join(target, "model.onnx")
        onnx_repack.save(model, out, size_threshold_bytes=4096, external_data="weights.bin", force=True)
        self.assertSameValues(self.values, out)

    def test_convert_tensors_to_and_from_external(self):
        model = onnx_repack.load(self.path)
        by_name = {t.name: t for t in model.tensors}
        chosen = [by_name["big"], by_name["small"], by_name["half"]]  # input order is kept
        target = os.path.join(self.dir, "c")
        os.makedirs(target)
        protos = model.convert_tensors_to_external(chosen, target, "three.bin")
        self.assertEqual([p.name for p in protos], ["big", "small", "half"])
        for proto in protos:
            self.assertEqual(proto.data_location, onnx.TensorProto.EXTERNAL)
            np.testing.assert_array_equal(numpy_helper.to_array(proto, target), self.values[proto.name])
        back = model.convert_tensors_from_external(
            [t for t in model.tensors if t.storage == "external"][:2])
        for proto in back:
            self.assertNotEqual(proto.data_location, onnx.TensorProto.EXTERNAL)
            np.testing.assert_array_equal(numpy_helper.to_array(proto), self.values[proto.name])
        # onnx.TensorProto objects go in too: inline ones to a file, and back.
        raw = numpy_helper.from_array(np.arange(5000, dtype=np.float64), "raw")
        [ext] = model.convert_tensors_to_external([raw], target, "raw.bin")
        self.assertEqual(os.path.getsize(os.path.join(target, "raw.bin")), 40000)
        np.testing.assert_array_equal(numpy_helper.to_array(ext, target), np.arange(5000))

    def test_converting_a_protos_tensors_writes_them_without_copying_them_first(self):
        # Issue 37: the initializers of an onnx.ModelProto in memory go from their own raw_data
        # to the data file, as save(proto) writes them: the proto unchanged, no second copy of
        # its weights (serialized and parsed, they took twice their size). 96 MiB of weights:
        # the conversion may add the largest tensor (16 MiB) and the core's buffers.
        rng = np.random.default_rng(5)
        weights = [numpy_helper.from_array(rng.standard_normal(4 << 20).astype(np.float32), f"w{i}")
                   for i in range(6)]
        small = numpy_helper.from_array(np.arange(10, dtype=np.int32), "small")
        proto = onnx.helper.make_model(onnx.helper.make_graph([], "g", [], [], weights + [small]))
        del weights
        before = proto.SerializeToString()
        target = os.path.join(self.dir, "lent")
        os.makedirs(target)
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS
        base = rss_kib()
        out = onnx_repack.convert_tensors_to_external(proto.graph.initializer, target, "w.bin")
        with open("/proc/self/status") as f:
            peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
        self.assertLess(peak - base, 48 * 1024, f"the conversion added {(peak - base) // 1024} MiB")
        self.assertEqual(proto.SerializeToString(), before)
        self.assertEqual([t.name for t in out], [t.name for t in proto.graph.initializer])
        for converted, original in zip(out, proto.graph.initializer):
            self.assertEqual(converted.data_location, onnx.TensorProto.EXTERNAL)
            np.testing.assert_array_equal(numpy_helper.to_array(converted, target),
                                          numpy_helper.to_array(original))

    def test_a_large_save_reuses_its_page_cache_pages(self):
        # Issue 37: each new page-cache page is memory free for long, which a virtual machine's
        # host may have taken back (filled at 0.25 GB/s against 2.5 for pages just freed,
        # bench/README.md). The save drops the pages it has waited to be on disk, and the next
        # ones reuse them: of a 192 MiB data file, only the last 64-96 MiB stay cached. The
        # same bytes.
        if not drops_clean_pages(self.dir):
            self.skipTest("this file system keeps its pages")
        arrays = {f"w{i}": np.full(4 << 20, i, np.float32) for i in range(12)}  # 16 MiB each
        proto = onnx.helper.make_model(onnx.helper.make_graph(
            [], "g", [], [], [numpy_helper.from_array(v, k) for k, v in arrays.items()]))
        out = os.path.join(self.dir, "cache", "model.onnx")
        onnx_repack.save(proto, out, size_threshold_bytes=1024)
        self.assertGreaterEqual(os.path.getsize(out + ".data"), 192 << 20)
        self.assertLess(cached_share(out + ".data", 32 << 20), 0.5)
        del proto
        self.assertSameValues(arrays, out)

    def test_module_functions_take_the_seed_signatures(self):
        moved = os.path.join(self.dir, "moved")
        shutil.copytree(os.path.dirname(self.path), moved)
        model = onnx_repack.load(self.path)
        onnx_repack.set_base_dir(model, moved)
        self.assertEqual(model.base_dir, moved)
        onnx_repack.load_to_model(model)
        self.assertTrue(all(t.storage == "inline" for t in model.tensors))
        onnx_repack.unload_from_model(model, moved, "w.bin", size_threshold_bytes=1 << 20)
        self.assertEqual(sorted(t.name for t in model.tensors if t.storage == "external"),
                         ["big", "big2"])
        # onnx_ir's tensor-list functions, over onnx.TensorProto alone.
        raw = [numpy_helper.from_array(self.values[n], n) for n in ("mid", "half")]
        ext = onnx_repack.convert_tensors_to_external(raw, moved, "two.bin")
        self.assertEqual([t.data_location for t in ext], [onnx.TensorProto.EXTERNAL] * 2)
        back = onnx_repack.convert_tensors_from_external(ext, moved)
        for proto in back:
            np.testing.assert_array_equal(numpy_helper.to_array(proto), self.values[proto.name])
        with self.assertRaises(onnx_repack.UsageError):
            onnx_repack.convert_tensors_to_external(model.tensors[:1], moved, "x.bin")


if __name__ == "__main__":
    import unittest
    unittest.main()
