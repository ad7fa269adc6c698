// Readers that build a model's graph, not only parse it: ONNX Runtime (onnxruntime-node, when
// scripts/install-test-readers.sh could install it) and onnx 1.12's strict shape inference
// (python3-onnx). Both need the values of shape, axes, pads, ... inputs while building the graph
// and refuse external ones (core/model/graph_build_inputs.h).
#pragma once

#include <QString>
#include <QStringList>

namespace fixtures {

// Whether ONNX Runtime is installed for the tests ($REPACK_ORT_MODULES and $REPACK_NODE).
bool onnxRuntimeAvailable();

// Empty when ONNX Runtime builds a session for each model (or is not installed); otherwise
// what it printed, a line per model.
QString onnxRuntimeFailure(const QStringList& modelPaths);

// Empty when every available reader builds the graph of each model; otherwise what each one that
// refused printed, a line per model.
QString graphBuildFailure(const QStringList& modelPaths);

// Runs onnx 1.12's writer, tests/readers/onnx_writer.py, with `arguments` ("model OUT N...",
// "external SRC OUT DATA"): empty when it wrote the model, else what it printed.
QString onnxWriterFailure(const QStringList& arguments);

// Has ONNX Runtime save the model `source` as `output`, its initializers of 1 KiB and more in
// `dataFile` beside it, laid out as ONNX Runtime lays them out (tests/readers/ort_write.js):
// empty when it did, else what it printed. Check onnxRuntimeAvailable() first.
QString onnxRuntimeWriteFailure(
    const QString& source, const QString& output, const QString& dataFile);

} // namespace fixtures
