// Models the remote-source suites serve (issue 38): written into a web server's folder by code,
// the same files a local copy of them holds.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>

namespace fixtures {

// Inline weights of 1 MiB and more (left out of a remote model's structure), small inline
// tensors, one in a Constant node and one in a subgraph; with `external`, two tensors in
// "w.bin" beside the model (written into `dir` too).
onnx::ModelProto servedModel(const std::filesystem::path& dir, bool external);

// Writes `model` to `path`, its folder made first.
void writeModelFile(const onnx::ModelProto& model, const std::filesystem::path& path);

} // namespace fixtures
