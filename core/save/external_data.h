// The five external-data operations (SPEC section 4), over the same streaming writer and
// reversible rewrite that save() uses. Data files are always written to a temporary and
// renamed into place, so a file being read is never overwritten while in use.
#pragma once

#include "core/plan/save_options.h"
#include "core/result.h"

#include <filesystem>
#include <string>
#include <vector>

namespace onnx {
class TensorProto;
}

namespace repack {

class Model;

// Points every external tensor at `dir` from now on (no bytes move).
void setBaseDir(Model& model, const std::filesystem::path& dir);

// Brings every external tensor's bytes into the model as raw_data. Fails, leaving the model
// unchanged, if the result would pass the 2 GiB protobuf limit or a tensor cannot be read.
Status loadToModel(Model& model, const SaveOptions& options = {});

// Writes every tensor of at least `thresholdBytes` into `baseDir/relativePath` and points the
// model at it (base directory `baseDir`); smaller external tensors come back inline. The .onnx
// file itself is not written: that is save()'s job. An existing file there that the model does
// not read, or that another model in its folder reads, is replaced only with options.force.
Status unloadFromModel(Model& model, const std::filesystem::path& baseDir,
    const std::string& relativePath, uint64_t thresholdBytes, const SaveOptions& options = {});

// Writes `tensors` (inline, or external relative to `baseDir`) into one data file
// `baseDir/relativePath`, returning tensors that refer to it, in input order. Like
// unloadFromModel, it replaces an existing file only when the tensors read it themselves and
// no other model in its folder does, unless options.force.
Result<std::vector<onnx::TensorProto>> convertTensorsToExternal(
    std::vector<onnx::TensorProto> tensors, const std::filesystem::path& baseDir,
    const std::string& relativePath, const SaveOptions& options = {});

// convertTensorsToExternal of the tensors that are the initializers of `model`'s graph (and
// nothing else): a model built to hold them, such as a detached one whose payloads are lent
// (Model::loadDetached), written from where they lie without being copied first.
Result<std::vector<onnx::TensorProto>> convertInitializersToExternal(Model& model,
    const std::filesystem::path& baseDir, const std::string& relativePath,
    const SaveOptions& options = {});

// In-memory (raw_data) copies of `tensors`, whose external data resolves against `baseDir`.
Result<std::vector<onnx::TensorProto>> convertTensorsFromExternal(
    std::vector<onnx::TensorProto> tensors, const std::filesystem::path& baseDir);

} // namespace repack
