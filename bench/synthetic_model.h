// An LLM-shaped synthetic model as a plan: the graph (nodes, inputs, outputs) plus the list of
// weights it uses, whose bytes are generated only when a writer streams them to disk.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace repack::bench {

struct PlannedTensor {
    std::string name;
    int32_t dataType = 0;
    std::vector<int64_t> dims;
    uint64_t bytes = 0;
    uint64_t seed = 0; // of the WeightFill that produces its bytes
};

struct SyntheticModel {
    onnx::ModelProto proto; // complete except for the graph's initializers
    std::vector<PlannedTensor> weights; // the initializers, in declaration order
    int layers = 0;
    int64_t hidden = 0;
    uint64_t totalBytes() const;
};

struct LlmShape {
    uint64_t weightBytes = 64u << 20; // total; the result is at most 2 x hidden bytes less
    uint64_t tensors = 0; // approximate count; 0: what the layers need
    int64_t hidden = 0; // 0: chosen from weightBytes and tensors
    uint64_t seed = 1;
};

// Layers of  h += MatMul(Add(MatMul(h * norm, up[d,4d] f32), b_up), Cast(down[4d,d] f16)) + b_down
// (+ extra [d] bias vectors when more tensors are wanted), then logits = h x Cast(lm_head f16)
// sized to use up the remaining bytes. Every initializer is used, so onnx.checker accepts it.
SyntheticModel planLlmModel(const LlmShape& shape);

} // namespace repack::bench
