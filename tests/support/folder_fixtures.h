// Folders of graphs made in code (Optimum-shaped exports that repeat weights across graphs),
// written by the fixture itself, never by the tool under test.
#pragma once

#include <onnx/onnx_pb.h>

#include <QString>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fixtures {

struct Weight {
    std::string name;
    std::string bytes;
    int32_t dtype = onnx::TensorProto::UINT8;
    std::vector<int64_t> dims = {}; // empty: [bytes.size()]
    bool external = true;
};

// `dir`/`modelName` with `weights` as initializers, each read by an Identity node and a graph
// output (so ONNX Runtime builds a session): external ones in `dir`/`dataName` one after
// another (the file is written here), the others raw_data.
bool writeGraph(const QString& dir, const QString& modelName, const std::string& dataName,
    const std::vector<Weight>& weights);

// Each weight's bytes by name, as a reader must see them (tensor name -> bytes).
std::map<std::string, std::string> bytesOf(const std::vector<Weight>& weights);

} // namespace fixtures
