#include "crash_fixtures.h"

#include "data_file_builder.h"
#include "model_builder.h"
#include "tensor_builder.h"

#include "core/model/model.h"

#include <QDir>
#include <QDirIterator>
#include <QRegularExpression>

#include <algorithm>
#include <cstring>

namespace fixtures {
namespace {

void setValueInfo(onnx::ValueInfoProto& info, const std::string& name, int32_t elemType,
    std::vector<int64_t> dims)
{
    info.set_name(name);
    auto* tensorType = info.mutable_type()->mutable_tensor_type();
    tensorType->set_elem_type(elemType);
    auto* shape = tensorType->mutable_shape();
    for (int64_t d : dims)
        shape->add_dim()->set_dim_value(d);
}

// A raw float/float16/int64 tensor of random bytes, recorded in `model.bytes`.
onnx::TensorProto noiseTensor(
    WeightedModel& model, const std::string& name, int32_t dtype, std::vector<int64_t> dims)
{
    const uint64_t seed = model.bytes.size() + 1;
    std::string bytes = noiseBytes(packedBytes(dtype, elementCount(dims)), seed);
    model.bytes[name] = bytes;
    return rawTensor(name, dtype, std::move(dims), std::move(bytes));
}

// An If branch returning its own initializer through Identity.
void fillBranch(WeightedModel& model, onnx::GraphProto& branch, const std::string& weight)
{
    *branch.add_initializer() = noiseTensor(model, weight, 1, {400});
    auto& identity = addNode(branch, "Identity", weight + "_identity");
    identity.add_input(weight);
    identity.add_output(weight + "_out");
    setValueInfo(*branch.add_output(), weight + "_out", 1, {400});
}

void externalizeAll(onnx::GraphProto& graph, DataFileBuilder& data, uint64_t threshold);

void externalizeTensor(onnx::TensorProto& tensor, DataFileBuilder& data, uint64_t threshold)
{
    if (tensor.has_raw_data() && tensor.raw_data().size() >= threshold)
        data.append(tensor);
}

void externalizeAll(onnx::GraphProto& graph, DataFileBuilder& data, uint64_t threshold)
{
    for (auto& t : *graph.mutable_initializer())
        externalizeTensor(t, data, threshold);
    for (auto& node : *graph.mutable_node())
        for (auto& attr : *node.mutable_attribute()) {
            if (attr.has_t())
                externalizeTensor(*attr.mutable_t(), data, threshold);
            for (auto& t : *attr.mutable_tensors())
                externalizeTensor(t, data, threshold);
            if (attr.has_g())
                externalizeAll(*attr.mutable_g(), data, threshold);
            for (auto& g : *attr.mutable_graphs())
                externalizeAll(g, data, threshold);
        }
}

} // namespace

std::string noiseBytes(uint64_t n, uint64_t seed)
{
    std::string out(n, '\0');
    uint64_t state = seed * 0x9E3779B97F4A7C15ull;
    for (uint64_t i = 0; i < n; i += 8) {
        state += 0x9E3779B97F4A7C15ull;
        uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        std::memcpy(out.data() + i, &z, std::min<uint64_t>(8, n - i));
    }
    return out;
}

WeightedModel weightedModel()
{
    WeightedModel model;
    model.proto = emptyModel();
    onnx::GraphProto& graph = *model.proto.mutable_graph();
    setValueInfo(*graph.add_input(), "cond", 9, {});

    *graph.add_initializer() = noiseTensor(model, "big_weight", 1, {512, 640}); // 1.25 MiB
    *graph.add_initializer() = noiseTensor(model, "mid_bias", 1, {300}); // 1200 B
    *graph.add_initializer() = noiseTensor(model, "big_half", 10, {600, 1024}); // 1.17 MiB
    *graph.add_initializer() = noiseTensor(model, "mid_index", 7, {2000}); // 16000 B
    *graph.add_initializer() = noiseTensor(model, "tiny", 1, {10}); // 40 B
    onnx::TensorProto typed = typedTensor("typed_scale", 1, {500}); // 2000 B
    std::string typedBytes(typed.float_data_size() * sizeof(float), '\0');
    std::memcpy(typedBytes.data(), typed.float_data().data(), typedBytes.size());
    model.bytes["typed_scale"] = typedBytes;
    *graph.add_initializer() = typed;

    addConstant(graph, "const_table", noiseTensor(model, "const_table", 1, {700}));
    auto& branch = addNode(graph, "If", "branch");
    branch.add_input("cond");
    branch.add_output("branch_out");
    fillBranch(model, addSubgraph(branch, "then_branch"), "then_w");
    fillBranch(model, addSubgraph(branch, "else_branch"), "else_w");

    setValueInfo(*graph.add_output(), "const_table_out", 1, {700});
    setValueInfo(*graph.add_output(), "branch_out", 1, {400});
    return model;
}

bool saveWithExternalData(onnx::ModelProto proto, const QString& dir, const QString& modelName,
    const std::string& dataName, uint64_t threshold)
{
    DataFileBuilder data(dataName);
    externalizeAll(*proto.mutable_graph(), data, threshold);
    return data.save(dir) && saveModel(proto, QDir(dir).filePath(modelName));
}

Layout layoutOf(const repack::Model& model)
{
    Layout layout;
    for (const auto& t : model.tensors()) {
        StoredAt at;
        at.external = t.isExternal();
        if (at.external) {
            at.location = t.external->location();
            at.offset = t.external->offset;
            at.length = t.external->length.value_or(t.byteSize());
        }
        layout[t.name] = at;
    }
    return layout;
}

std::string describe(const StoredAt& at)
{
    if (!at.external)
        return "inline";
    return at.location + "@" + std::to_string(at.offset) + "+" + std::to_string(at.length);
}

std::string compareBytes(
    const repack::Model& model, const std::map<std::string, std::string>& expected)
{
    std::string report;
    size_t seen = 0;
    for (size_t i = 0; i < model.tensors().size(); ++i) {
        const auto& info = model.tensors()[i];
        const auto want = expected.find(info.name);
        if (want == expected.end()) {
            report += info.qualifiedName() + ": not in the source model\n";
            continue;
        }
        ++seen;
        auto got = model.read(i);
        if (!got) {
            report += got.error().message + "\n";
            continue;
        }
        const auto bytes = got->bytes();
        if (bytes.size() != want->second.size()
            || std::memcmp(bytes.data(), want->second.data(), bytes.size()) != 0)
            report += info.qualifiedName() + ": bytes differ from the source ("
                + std::to_string(bytes.size()) + " bytes read, "
                + std::to_string(want->second.size()) + " expected)\n";
    }
    if (seen != expected.size())
        report += std::to_string(expected.size() - seen) + " source tensor(s) missing\n";
    return report;
}

QStringList tempLeftovers(const QString& dir)
{
    static const QRegularExpression temp(QStringLiteral("\\.repack-tmp-"));
    QStringList found;
    QDirIterator it(dir, QDir::Files | QDir::Hidden | QDir::System, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        if (temp.match(it.fileName()).hasMatch())
            found << QDir(dir).relativeFilePath(path);
    }
    return found;
}

} // namespace fixtures
