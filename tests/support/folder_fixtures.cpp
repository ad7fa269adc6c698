#include "folder_fixtures.h"

#include "model_builder.h"
#include "tensor_builder.h"

#include <QDir>
#include <QFile>

namespace fixtures {

bool writeGraph(const QString& dir, const QString& modelName, const std::string& dataName,
    const std::vector<Weight>& weights)
{
    onnx::ModelProto model = emptyModel();
    std::string data;
    for (const Weight& w : weights) {
        const std::vector<int64_t> dims
            = w.dims.empty() ? std::vector<int64_t>{static_cast<int64_t>(w.bytes.size())} : w.dims;
        onnx::TensorProto t = rawTensor(w.name, w.dtype, dims, w.bytes);
        if (w.external) {
            t.clear_raw_data();
            setExternal(t, dataName, std::to_string(data.size()), std::to_string(w.bytes.size()));
            data += w.bytes;
        }
        *model.mutable_graph()->add_initializer() = std::move(t);
        // Read by a node and an output, so ONNX Runtime builds a session for it.
        onnx::NodeProto& node = addNode(*model.mutable_graph(), "Identity", w.name + "_read");
        node.add_input(w.name);
        node.add_output(w.name + "_out");
        auto* output = model.mutable_graph()->add_output();
        output->set_name(w.name + "_out");
        output->mutable_type()->mutable_tensor_type()->set_elem_type(w.dtype);
    }
    if (!data.empty()) {
        QFile file(QDir(dir).filePath(QString::fromStdString(dataName)));
        if (!file.open(QIODevice::WriteOnly)
            || file.write(data.data(), static_cast<qint64>(data.size()))
                != static_cast<qint64>(data.size()))
            return false;
    }
    return saveModel(model, QDir(dir).filePath(modelName));
}

std::map<std::string, std::string> bytesOf(const std::vector<Weight>& weights)
{
    std::map<std::string, std::string> out;
    for (const Weight& w : weights)
        out[w.name] = w.bytes;
    return out;
}

} // namespace fixtures
