#!/usr/bin/python3
"""What the default alignment costs: the padding `onnx-repack plan` lays out at 4 KiB and at
64 KiB (tensors of 1 MiB and more aligned, declaration order) for the tensor shapes of common
architectures, written in their export order as models whose data file is sparse (nothing is
read, the plan only needs sizes).

usage: bench/alignment_cost.py [BUILD_DIR]    (default: build; needs app/onnx-repack)
Prints one row per model: weights, tensors >= 1 MiB, padding at 4 KiB and 64 KiB (bytes, %).
"""
import json
import os
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto, helper

F32, F16, I8 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT8
SIZE = {F32: 4, F16: 2, I8: 1}


def resnet50():
    out = [("conv1", [64, 3, 7, 7])] + bn("bn1", 64)
    cin = 64
    for stage, (width, blocks) in enumerate([(64, 3), (128, 4), (256, 6), (512, 3)]):
        for b in range(blocks):
            p = f"layer{stage + 1}.{b}"
            out += [(p + ".conv1", [width, cin, 1, 1])] + bn(p + ".bn1", width)
            out += [(p + ".conv2", [width, width, 3, 3])] + bn(p + ".bn2", width)
            out += [(p + ".conv3", [4 * width, width, 1, 1])] + bn(p + ".bn3", 4 * width)
            if b == 0:
                out += [(p + ".down", [4 * width, cin, 1, 1])] + bn(p + ".down_bn", 4 * width)
            cin = 4 * width
    return [(n, s, F32) for n, s in out + [("fc.weight", [1000, 2048]), ("fc.bias", [1000])]]


def bn(prefix, c):
    return [(f"{prefix}.{k}", [c]) for k in ("weight", "bias", "mean", "var")]


def transformer(prefix, layers, d, ff, dtype, fused_qkv=False, norms=2, biases=True):
    out = []
    for i in range(layers):
        p = f"{prefix}.{i}"
        out.append((p + ".norm1", [d]))
        if fused_qkv:
            out.append((p + ".qkv", [d, 3 * d]))
            if biases:
                out.append((p + ".qkv_bias", [3 * d]))
        else:
            for m in "qkv":
                out.append((f"{p}.{m}", [d, d]))
                if biases:
                    out.append((f"{p}.{m}_bias", [d]))
        out.append((p + ".o", [d, d]))
        if norms > 1:
            out.append((p + ".norm2", [d]))
        out.append((p + ".up", [d, ff]))
        if not biases:
            out.append((p + ".gate", [d, ff]))
        out.append((p + ".down", [ff, d]))
        if biases:
            out += [(p + ".up_bias", [ff]), (p + ".down_bias", [d])]
    return [(n, s, dtype) for n, s in out]


def bert_base():
    emb = [("word", [30522, 768], F32), ("position", [512, 768], F32), ("type", [2, 768], F32)]
    return emb + transformer("layer", 12, 768, 3072, F32) + [("pooler", [768, 768], F32)]


def gpt2():
    emb = [("wte", [50257, 768], F32), ("wpe", [1024, 768], F32)]
    return emb + transformer("h", 12, 768, 3072, F32, fused_qkv=True)


def vit_b16():
    head = [("patch", [768, 3, 16, 16], F32), ("pos", [197, 768], F32)]
    return head + transformer("blocks", 12, 768, 3072, F32, fused_qkv=True) + [
        ("head", [768, 1000], F32)]


def whisper_small_encoder():
    conv = [("conv1", [768, 80, 3], F32), ("conv2", [768, 768, 3], F32),
            ("pos", [1500, 768], F32)]
    return conv + transformer("layers", 12, 768, 3072, F32)


def llama(layers, d, ff, vocab, dtype):
    return ([("embed", [vocab, d], dtype)]
            + transformer("layers", layers, d, ff, dtype, biases=False)
            + [("norm", [d], dtype), ("lm_head", [vocab, d], dtype)])


MODELS = [
    ("ResNet-50 fp32", resnet50),
    ("BERT-base fp32", bert_base),
    ("GPT-2 small fp32", gpt2),
    ("ViT-B/16 fp32", vit_b16),
    ("Whisper-small encoder fp32", whisper_small_encoder),
    ("TinyLlama-1.1B fp16", lambda: llama(22, 2048, 5632, 32000, F16)),
    ("Llama-2-7B fp16", lambda: llama(32, 4096, 11008, 32000, F16)),
    ("Llama-2-7B int8", lambda: llama(32, 4096, 11008, 32000, I8)),
]


def nbytes(shape, dtype):
    n = SIZE[dtype]
    for d in shape:
        n *= d
    return n


def write_model(path, tensors):
    """`tensors` external, back to back in a sparse data file: only the sizes matter."""
    offset = 0
    inits = []
    for name, shape, dtype in tensors:
        t = TensorProto(name=name, data_type=dtype, dims=shape)
        t.data_location = TensorProto.EXTERNAL
        length = nbytes(shape, dtype)
        for k, v in (("location", "src.data"), ("offset", str(offset)), ("length", str(length))):
            e = t.external_data.add()
            e.key, e.value = k, v
        inits.append(t)
        offset += length
    graph = helper.make_graph([], "weights", [], [], inits)
    onnx.save_model(helper.make_model(graph), path)
    with open(os.path.join(os.path.dirname(path), "src.data"), "wb") as f:
        f.truncate(offset)
    return offset


def padding(cli, path, align):
    out = subprocess.run([cli, "plan", path, "--align", align, "--json"], check=True,
                         capture_output=True, text=True).stdout
    return sum(f["padding_bytes"] for f in json.loads(out)["files"])


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    cli = os.path.join(build, "app", "onnx-repack")
    print(f"{'model':28} {'weights':>10} {'>=1MiB':>6} {'pad 4 KiB':>16} {'pad 64 KiB':>18}")
    with tempfile.TemporaryDirectory() as scratch:
        for label, make in MODELS:
            tensors = make()
            path = os.path.join(scratch, "m.onnx")
            total = write_model(path, tensors)
            large = sum(1 for _, s, d in tensors if nbytes(s, d) >= 1 << 20)
            row = [f"{label:28} {total / 2**20:8.1f}Mi {large:6}"]
            for align in ("4KiB", "64KiB"):
                pad = padding(cli, path, align)
                row.append(f"{pad / 2**10:9.0f} KiB {100 * pad / total:5.2f}%")
            print(" ".join(row))


if __name__ == "__main__":
    main()
