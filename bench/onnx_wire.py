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
