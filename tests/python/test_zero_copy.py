"""Tensor.numpy() is a read-only view of the mapped file: it costs no memory until pages are
touched, cannot be written, and an array taken before an in-place save keeps the bytes it was
taken with while the stale Tensor handle refuses to read."""
import gc
import os
import unittest

import numpy as np

import onnx_repack
from support import TempDirTest, make_model, rss_kib, sparse_external_model

MiB = 1 << 20


class ZeroCopy(TempDirTest):
    def test_a_large_view_costs_only_the_pages_touched(self):
        size = 1024 * MiB  # sparse: no disk blocks, and pages only where touched
        path = sparse_external_model(self.dir, size)
        model = onnx_repack.load(path)
        gc.collect()
        before = rss_kib()
        array = model.tensors[0].numpy()
        self.assertEqual(array.nbytes, size)
        self.assertLess(rss_kib() - before, 8 * 1024, "numpy() read the tensor")
        float(array[: MiB // 4].sum())  # touch the first MiB
        touched = rss_kib() - before
        self.assertLess(touched, 9 * 1024)
        self.assertGreaterEqual(touched, 900)
        float(array[::1024].sum())  # one float of every page: now they are all resident
        self.assertGreater(rss_kib() - before, 900 * 1024)
        del array, model  # the last owners of the mapping
        gc.collect()
        self.assertLess(rss_kib() - before, 8 * 1024, "the mapping outlived its owners")

    def test_loading_reads_no_weights(self):
        path = sparse_external_model(self.dir, 128 * MiB, tensors=2)
        gc.collect()
        before = rss_kib()
        model = onnx_repack.load(path)
        self.assertEqual([t.nbytes for t in model.tensors], [128 * MiB] * 2)
        self.assertLess(rss_kib() - before, 4 * 1024)

    def test_the_view_is_read_only(self):
        path = make_model(self.dir)
        for tensor in onnx_repack.load(path).tensors:
            with self.subTest(tensor=tensor.name):
                array = tensor.numpy()
                self.assertFalse(array.flags.writeable)
                with self.assertRaises(ValueError):
                    array.flat[0] = 1
                with self.assertRaises(ValueError):
                    array.setflags(write=True)

    def test_values_and_dtypes(self):
        path = make_model(self.dir)
        model = onnx_repack.load(path)
        from support import tensor_values
        expected = tensor_values(path)
        for tensor in model.tensors:
            key = tensor.name if tensor.kind == "initializer" else "const.value"
            with self.subTest(tensor=tensor.name):
                np.testing.assert_array_equal(tensor.numpy(), expected[key])
                self.assertEqual(tensor.dtype, expected[key].dtype)
                self.assertEqual(tensor.shape, expected[key].shape)
                self.assertEqual(tensor.nbytes, expected[key].nbytes)

    def test_inline_payloads_are_views_of_the_onnx_file(self):
        path = make_model(self.dir, external=False)
        model = onnx_repack.load(path)
        big = next(t for t in model.tensors if t.name == "big")
        self.assertEqual(big.storage, "inline")
        array = big.numpy()
        self.assertIsNotNone(array.base)  # not a copy: the array holds the mapping
        self.assertFalse(array.flags.owndata)

    def test_in_place_save_keeps_old_arrays_and_refuses_stale_handles(self):
        path = make_model(self.dir)
        model = onnx_repack.load(path)
        tensors = {t.name: t for t in model.tensors}
        old = {name: t.numpy() for name, t in tensors.items()}
        copies = {name: a.copy() for name, a in old.items()}
        old_offset = tensors["big2"].offset
        # Size order moves every tensor: the old offsets now hold other bytes.
        onnx_repack.save(model, path, order="size", align=0)
        new = {t.name: t for t in model.tensors}
        self.assertNotEqual(new["big2"].offset, old_offset)
        for name, array in old.items():
            with self.subTest(tensor=name):
                np.testing.assert_array_equal(array, copies[name])  # the old mapping, still valid
                np.testing.assert_array_equal(new[name].numpy(), copies[name])
                with self.assertRaises(onnx_repack.Error) as raised:
                    tensors[name].numpy()
                self.assertEqual(raised.exception.kind, "changed")
                self.assertIn(name, str(raised.exception))

    def test_a_save_through_a_path_leaves_a_loaded_model_reading_its_own_file(self):
        path = make_model(self.dir)
        model = onnx_repack.load(path)
        big = next(t for t in model.tensors if t.name == "big")
        before = big.numpy().copy()
        onnx_repack.save(path, path, order="size", align=0)  # another Model replaced the files
        try:
            np.testing.assert_array_equal(big.numpy(), before)  # never other bytes
        except onnx_repack.Error as error:
            self.assertRegex(str(error), "invalidated|changed")


if __name__ == "__main__":
    unittest.main()
