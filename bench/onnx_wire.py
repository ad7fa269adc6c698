"""Protobuf wire-format pieces for the bench scripts that write ONNX models byte by byte (models
of millions of tensors, or of GiB of weights, that python-onnx would take minutes to build)."""


def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def field(number, payload):
    """A length-delimited field (wire type 2)."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def entry(key, value):
    """A TensorProto.external_data key/value entry (field 13)."""
    return field(13, field(1, key) + field(2, value))


SCALAR = b"\x08\x01\x10\x01" + field(9, bytes(4))  # a TensorProto: dims [1], FLOAT, 4 raw bytes


def model(graph, *extra):
    """A ModelProto of IR 8 and opset 17 around the GraphProto bytes `graph`."""
    return b"\x08\x08" + field(7, graph) + field(8, b"\x10\x11") + b"".join(extra)


def constants_model(count):
    """A model of `count` Constant nodes "c0", "c1", ... each with a one-element value."""
    value = field(1, b"value") + field(5, SCALAR) + b"\xa0\x01\x04"  # name, t, type TENSOR
    return model(field(2, b"g") + b"".join(
        field(1, field(2, b"c%d" % i) + field(4, b"Constant") + field(5, value))
        for i in range(count)))
