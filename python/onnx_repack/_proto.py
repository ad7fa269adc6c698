"""The TensorProtos of an onnx.ModelProto wherever they carry data, as the core's index lists
them (core/model/tensor_index.h): initializers and sparse initializers of graphs and subgraphs
at any depth, tensors in node attributes, functions. save() moves their large raw_data out
while it streams the model (python/proto_payloads.h); a tensor missed here is just not moved."""


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
