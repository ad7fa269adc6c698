// Reads every external byte range of a model with bounded memory and checks sizes and any
// checksums present. Returns the model's own validation problems plus what reading found.
#pragma once

#include "core/problem.h"
#include "core/progress.h"

#include <vector>

namespace repack {

class Model;

struct VerifyOptions {
    ProgressCallback progress;
    const CancelToken* cancel = nullptr;
    size_t bufferBytes = 8u << 20; // the only memory reading uses, whatever the model's size
};

std::vector<Problem> verify(const Model& model, const VerifyOptions& options = {});

} // namespace repack
