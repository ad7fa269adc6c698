"""The TensorProtos of an onnx.ModelProto wherever they carry data, as the core's index lists
them (core/model/tensor_index.h): initializers and sparse initializers of graphs and subgraphs
at any depth, tensors in node attributes, functions. save() reads their large raw_data from
the proto as it writes it (python/proto_payloads.h); a tensor missed here is copied with the
rest of the model."""


def _sparse(sparse):
    yield sparse.values
    yield sparse.indices


def _nodes(nodes):
    for node in nodes:
        for attribute in node.attribute:
            if attribute.HasField("t"):
                yield attribute.t
            yield from attribute.tensors
            if attribute.HasField("sparse_tensor"):
                yield from _sparse(attribute.sparse_tensor)
            for sparse in attribute.sparse_tensors:
                yield from _sparse(sparse)
            if attribute.HasField("g"):
                yield from _graph(attribute.g)
            for graph in attribute.graphs:
                yield from _graph(graph)


def _graph(graph):
    yield from graph.initializer
    for sparse in graph.sparse_initializer:
        yield from _sparse(sparse)
    yield from _nodes(graph.node)


def tensors(model):
    """Every TensorProto of `model` that may carry data, as a list."""
    found = []
    if model.HasField("graph"):
        found.extend(_graph(model.graph))
    for function in model.functions:
        found.extend(_nodes(function.node))
    return found


_EXTERNAL = 1  # TensorProto.DataLocation.EXTERNAL


def _varint(value):
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _present(message, field):
    if field.label == field.LABEL_REPEATED:
        return len(getattr(message, field.name)) > 0
    return message.HasField(field.name)


def _fields_wire(message, fields):
    """The wire form of these fields of `message` (none of them a message), as protobuf
    writes them."""
    part = type(message)()
    for field in fields:
        if field.label == field.LABEL_REPEATED:
            getattr(part, field.name).extend(getattr(message, field.name))
        else:
            setattr(part, field.name, getattr(message, field.name))
    return part.SerializeToString()


def _unknown_fields(message):
    """How many unknown fields `message` holds; 1 when this protobuf cannot tell (the message
    is then written whole, its payloads with it, which is always right)."""
    try:
        return len(message.UnknownFields())
    except (AttributeError, NotImplementedError):  # upb; 4.22+ has the UnknownFieldSet class
        try:
            from google.protobuf import unknown_fields
            return len(unknown_fields.UnknownFieldSet(message))
        except Exception:
            return 1


def _walk(message, size, lendable, min_bytes, out):
    """Appends the wire form of `message` (its ByteSize(), `size` bytes) to `out` in pieces.
    Each message's size is taken once: ByteSize() goes over the whole message."""
    descriptor = message.DESCRIPTOR
    if size < min_bytes or _unknown_fields(message) or any(
            f.message_type is not None and f.message_type.GetOptions().map_entry
            for f in descriptor.fields):
        out.append(message.SerializeToString())
        return
    lends = id(message) in lendable
    written = 0  # of this message, the raw_data it lends aside
    raw_at = None  # the index in `out` its raw_data goes
    run = []  # fields in a row that are no messages, written as one piece

    def flush():
        nonlocal written
        if run:
            piece = _fields_wire(message, run)
            out.append(piece)
            written += len(piece)
            run.clear()

    for field in sorted(descriptor.fields, key=lambda f: f.number):
        if not _present(message, field):
            continue
        if field.type == field.TYPE_MESSAGE:
            flush()
            items = getattr(message, field.name)
            tag = _varint(field.number << 3 | 2)
            for item in items if field.label == field.LABEL_REPEATED else [items]:
                item_size = item.ByteSize()
                header = tag + _varint(item_size)
                out.append(header)
                written += len(header) + item_size
                _walk(item, item_size, lendable, min_bytes, out)
        elif lends and field.name == "raw_data":
            flush()
            raw_at = len(out)
            out.append(None)
        else:
            run.append(field)
    flush()
    if raw_at is None:
        return
    # raw_data is what ByteSize() counts beyond the rest: its tag (one byte: field 9), its
    # length as a varint, and its bytes (never read here: the getter would copy them).
    rest = size - written - 1
    length = next(rest - n for n in range(1, 11) if len(_varint(rest - n)) == n)
    if length < min_bytes:
        out[raw_at] = _fields_wire(message, [descriptor.fields_by_name["raw_data"]])
    else:
        out[raw_at : raw_at + 1] = [b"\x4a" + _varint(length), (message, length)]


def _lendable(tensors):
    # An external tensor's raw_data is no payload to the core (its bytes are in its file): it
    # stays in the wire form.
    return {id(t) for t in tensors if t.data_location != _EXTERNAL}


def _size(pieces):
    return sum(len(p) if isinstance(p, bytes) else p[1] for p in pieces)


def skeleton(model, min_bytes):
    """The wire form of `model` in pieces, in order: bytes, or (TensorProto, length) where the
    raw_data of a TensorProto of tensors(model) of at least min_bytes lies (its bytes left out).
    Reads the model and changes nothing in it; the pieces add up to model.ByteSize()."""
    found = tensors(model)  # held: their wrappers keep their identity while the walk runs
    out = []
    size = model.ByteSize()
    _walk(model, size, _lendable(found), min_bytes, out)
    return out, size


def initializers_skeleton(tensors, min_bytes):
    """skeleton() of a ModelProto whose graph holds `tensors` (TensorProtos) as initializers,
    in order, and nothing else; and its size."""
    tensors = list(tensors)
    lendable = _lendable(tensors)
    body = []
    for tensor in tensors:
        tensor_size = tensor.ByteSize()
        body.append(b"\x2a" + _varint(tensor_size))  # GraphProto.initializer: field 5
        _walk(tensor, tensor_size, lendable, min_bytes, body)
    size = _size(body)
    head = b"\x3a" + _varint(size)  # ModelProto.graph: field 7
    return [head] + body, len(head) + size
