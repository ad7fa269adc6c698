#include "served_models.h"

#include "model_builder.h"
#include "tensor_builder.h"

#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace fixtures {

onnx::ModelProto servedModel(const fs::path& dir, bool external)
{
    onnx::ModelProto model = emptyModel();
    onnx::GraphProto& graph = *model.mutable_graph();
    for (int i = 0; i < 3; ++i)
        *graph.add_initializer() = rawTensor("w" + std::to_string(i), onnx::TensorProto::FLOAT,
            {256, 1024}, patternBytes(1 << 20, uint8_t(i)));
    *graph.add_initializer() = rawTensor("bias", onnx::TensorProto::FLOAT, {16});
    *graph.add_initializer() = typedTensor("typed", onnx::TensorProto::INT64, {40});
    addConstant(graph, "c", rawTensor("c_value", onnx::TensorProto::FLOAT, {100000}));
    onnx::NodeProto& branch = addNode(graph, "If", "branch");
    *addSubgraph(branch, "then_branch").add_initializer()
        = rawTensor("inner", onnx::TensorProto::FLOAT, {70000});
    if (external) {
        fs::create_directories(dir);
        std::ofstream(dir / "w.bin", std::ios::binary)
            << addExternalPair(graph, "w.bin", 75000, 1250, 7);
    }
    return model;
}

void writeModelFile(const onnx::ModelProto& model, const fs::path& path)
{
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    model.SerializeToOstream(&out);
}

} // namespace fixtures
