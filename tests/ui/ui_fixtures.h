// Small models written by code into a temporary folder for the UI suites: what each tensor is
// and where it was put is recorded here, so tests compare the views with how the fixture was
// built rather than with the core's own answers.
#pragma once

#include "core/model/model.h"
#include "tests/support/data_file_builder.h"
#include "tests/support/model_builder.h"
#include "tests/support/tensor_builder.h"

#include <QDir>
#include <QFile>
#include <QMap>
#include <QString>

#include <cstdint>
#include <string>
#include <vector>

namespace uifixtures {

struct BuiltTensor {
    std::string name;
    uint64_t bytes = 0;
    bool external = false;
    uint64_t offset = 0;
    std::string content; // the tensor's bytes
};

// Inline raw, inline typed, a Constant attribute, and three tensors in "weights.bin"
// (one aligned to 4096, leaving padding before it).
inline std::vector<BuiltTensor> writeMixedModel(
    const QString& dir, const QString& fileName = QStringLiteral("model.onnx"))
{
    onnx::ModelProto model = fixtures::emptyModel();
    onnx::GraphProto& graph = *model.mutable_graph();
    fixtures::DataFileBuilder data("weights.bin");
    std::vector<BuiltTensor> built;
    auto add = [&](onnx::TensorProto tensor, bool external, uint64_t alignment = 1) {
        BuiltTensor t{tensor.name(), 0, external, 0, tensor.raw_data()};
        t.bytes = fixtures::packedBytes(tensor.data_type(),
            fixtures::elementCount({tensor.dims().begin(), tensor.dims().end()}));
        if (external)
            t.offset = data.append(tensor, alignment);
        *graph.add_initializer() = tensor;
        built.push_back(t);
    };
    add(fixtures::rawTensor("small_a", onnx::TensorProto::FLOAT, {4}), false);
    add(fixtures::typedTensor("typed_b", onnx::TensorProto::INT64, {3}), false);
    add(fixtures::rawTensor(
            "ext_c", onnx::TensorProto::FLOAT, {256}, fixtures::patternBytes(1024, 3)),
        true);
    add(fixtures::rawTensor(
            "ext_d", onnx::TensorProto::FLOAT, {64, 64}, fixtures::patternBytes(16384, 5)),
        true, 4096);
    add(fixtures::rawTensor(
            "ext_e", onnx::TensorProto::FLOAT16, {8}, fixtures::patternBytes(16, 7)),
        true);
    onnx::TensorProto constant = fixtures::rawTensor("const_f", onnx::TensorProto::FLOAT, {2});
    built.push_back({"const_f", 8, false, 0, constant.raw_data()});
    fixtures::addConstant(graph, "const_node", constant);
    if (!data.save(dir) || !fixtures::saveModel(model, QDir(dir).filePath(fileName)))
        return {};
    return built;
}

// Every tensor inline (raw), with sizes straddling the thresholds the tests pick.
inline std::vector<BuiltTensor> writeInlineModel(const QString& dir,
    const std::vector<uint64_t>& sizes, const QString& fileName = QStringLiteral("model.onnx"))
{
    onnx::ModelProto model = fixtures::emptyModel();
    std::vector<BuiltTensor> built;
    for (size_t i = 0; i < sizes.size(); ++i) {
        const std::string name = "w" + std::to_string(i);
        const std::string bytes = fixtures::patternBytes(sizes[i], uint8_t(i * 17 + 1));
        *model.mutable_graph()->add_initializer()
            = fixtures::rawTensor(name, onnx::TensorProto::UINT8, {int64_t(sizes[i])}, bytes);
        built.push_back({name, sizes[i], false, 0, bytes});
    }
    if (!fixtures::saveModel(model, QDir(dir).filePath(fileName)))
        return {};
    return built;
}

// One external tensor whose location is `location` (e.g. "../escape.bin").
inline bool writeBrokenModel(const QString& dir, const std::string& location)
{
    onnx::ModelProto model = fixtures::emptyModel();
    onnx::TensorProto tensor = fixtures::rawTensor("w", onnx::TensorProto::FLOAT, {16});
    tensor.clear_raw_data();
    fixtures::setExternal(tensor, location, std::string("0"), std::string("64"));
    *model.mutable_graph()->add_initializer() = tensor;
    *model.mutable_graph()->add_initializer()
        = fixtures::rawTensor("fine", onnx::TensorProto::FLOAT, {4});
    return fixtures::saveModel(model, QDir(dir).filePath(QStringLiteral("broken.onnx")));
}

// Two models, a.onnx and b.onnx, each with one external tensor in the same "shared.data"
// (a's at offset 0, b's after it). Returns the tensors' bytes {a's, b's}, empty on failure.
inline std::vector<std::string> writeSharedModels(const QString& dir)
{
    fixtures::DataFileBuilder data("shared.data");
    std::vector<std::string> contents;
    for (const char* name : {"a", "b"}) {
        onnx::ModelProto model = fixtures::emptyModel();
        const std::string bytes = fixtures::patternBytes(4096, uint8_t(name[0]));
        onnx::TensorProto tensor = fixtures::rawTensor(
            std::string("w_") + name, onnx::TensorProto::FLOAT, {1024}, bytes);
        data.append(tensor);
        *model.mutable_graph()->add_initializer() = tensor;
        if (!fixtures::saveModel(
                model, QDir(dir).filePath(QString::fromLatin1(name) + QStringLiteral(".onnx"))))
            return {};
        contents.push_back(bytes);
    }
    if (!data.save(dir))
        return {};
    return contents;
}

// Where each tensor of the model at `path` is: "inline" or "file@offset".
inline QMap<QString, QString> placesOn(const QString& path)
{
    QMap<QString, QString> places;
    auto model = repack::Model::load(path.toStdString());
    if (!model)
        return places;
    for (const repack::TensorInfo& t : (*model)->tensors())
        places.insert(QString::fromStdString(t.name),
            t.isExternal() ? QString::fromStdString(t.external->location()) + u'@'
                    + QString::number(t.external->offset)
                           : QStringLiteral("inline"));
    return places;
}

// Every file below `dir` with its bytes, to prove a failed save changed nothing.
inline QMap<QString, QByteArray> folderContents(const QString& dir)
{
    QMap<QString, QByteArray> files;
    for (const QString& name : QDir(dir).entryList(QDir::Files | QDir::Hidden)) {
        QFile file(QDir(dir).filePath(name));
        if (file.open(QIODevice::ReadOnly))
            files.insert(name, file.readAll());
    }
    return files;
}

// Model A in `dirA`, model B in `dirB` (each "m.onnx" with "w.bin"), one tensor per kind:
// same (unchanged, external), inl_same (unchanged, inline), moved, toinline (storage changed),
// content (same size, other bytes), removed (A only), added (B only).
inline bool writeComparePair(const QString& dirA, const QString& dirB)
{
    auto tensor = [](const char* name, uint8_t seed) {
        return fixtures::rawTensor(
            name, onnx::TensorProto::FLOAT, {256}, fixtures::patternBytes(1024, seed));
    };
    {
        onnx::ModelProto model = fixtures::emptyModel();
        fixtures::DataFileBuilder data("w.bin");
        const std::pair<const char*, uint8_t> external[]
            = {{"same", 1}, {"moved", 2}, {"toinline", 3}, {"content", 4}, {"removed", 5}};
        for (const auto& [name, seed] : external) {
            onnx::TensorProto t = tensor(name, seed);
            data.append(t);
            *model.mutable_graph()->add_initializer() = t;
        }
        *model.mutable_graph()->add_initializer() = fixtures::rawTensor(
            "inl_same", onnx::TensorProto::FLOAT, {4}, fixtures::patternBytes(16, 6));
        if (!data.save(dirA)
            || !fixtures::saveModel(model, QDir(dirA).filePath(QStringLiteral("m.onnx"))))
            return false;
    }
    onnx::ModelProto model = fixtures::emptyModel();
    fixtures::DataFileBuilder data("w.bin");
    auto external = [&](const char* name, uint8_t seed, uint64_t offset) {
        onnx::TensorProto t = tensor(name, seed);
        data.externalize(t, offset);
        *model.mutable_graph()->add_initializer() = t;
    };
    external("same", 1, 0);
    external("moved", 2, 4096);
    *model.mutable_graph()->add_initializer() = tensor("toinline", 3);
    external("content", 9, 3072); // A's offset, other bytes
    *model.mutable_graph()->add_initializer() = fixtures::rawTensor(
        "inl_same", onnx::TensorProto::FLOAT, {4}, fixtures::patternBytes(16, 6));
    external("added", 7, 5120);
    return data.save(dirB)
        && fixtures::saveModel(model, QDir(dirB).filePath(QStringLiteral("m.onnx")));
}

} // namespace uifixtures
