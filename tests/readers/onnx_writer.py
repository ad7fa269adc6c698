"""Writes models with onnx 1.12's own writer, for tests that check what this tool makes of files
other tools laid out.

  onnx_writer.py model OUT N...         an inline model of float weights of N elements each,
                                        every one used by a node (so ONNX Runtime keeps it)
  onnx_writer.py external SRC OUT DATA  SRC saved by onnx.save_model with its tensors of 1 KiB
                                        and more in the data file DATA beside OUT

Exits 1 with the error on failure."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def weights_model(out, sizes):
    weights, nodes, last = [], [], "x"
    for i, size in enumerate(sizes):
        name = f"w{i}"
        weights.append(numpy_helper.from_array((np.arange(size) % 7).astype(np.float32), name))
        nodes.append(helper.make_node("ReduceSum", [name], [f"s{i}"], keepdims=0))
        nodes.append(helper.make_node("Add", [last, f"s{i}"], [f"y{i}"]))
        last = f"y{i}"
    graph = helper.make_graph(nodes, "weights",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [])],
                              [helper.make_tensor_value_info(last, TensorProto.FLOAT, [])],
                              weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, out)


def main(args):
    if args[0] == "model":
        weights_model(args[1], [int(n) for n in args[2:]])
    elif args[0] == "external":
        onnx.save_model(onnx.load(args[1]), args[2], save_as_external_data=True,
                        all_tensors_to_one_file=True, location=args[3], size_threshold=1024)
    else:
        raise SystemExit(f"unknown command {args[0]}")


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except Exception as e:  # what failed, for the test's message
        print(f"error: {e}")
        sys.exit(1)
