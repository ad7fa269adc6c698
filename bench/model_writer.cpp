#include "model_writer.h"

#include "buffered_file.h"
#include "weight_fill.h"

#include <google/protobuf/io/coded_stream.h>

#include <limits>
#include <memory>
#include <optional>

namespace fs = std::filesystem;
using google::protobuf::io::CodedOutputStream;

namespace repack::bench {
namespace {

void describe(onnx::TensorProto& t, const PlannedTensor& w)
{
    t.set_name(w.name);
    t.set_data_type(w.dataType);
    for (int64_t dim : w.dims)
        t.add_dims(dim);
}

void addEntry(onnx::TensorProto& t, const std::string& key, const std::string& value)
{
    auto* entry = t.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
}

std::span<const std::byte> bytesOf(const std::string& s)
{
    return std::as_bytes(std::span(s.data(), s.size()));
}

Status writeSmallFile(const fs::path& path, const std::string& bytes)
{
    auto file = BufferedFile::create(path);
    if (!file)
        return file.error();
    if (Status s = file->write(bytesOf(bytes)); !s)
        return s;
    return file->close();
}

// Protobuf wire format pieces for streaming length-delimited fields by hand.
constexpr uint8_t kGraphInitializerTag = (5 << 3) | 2; // GraphProto.initializer
constexpr uint8_t kModelGraphTag = (7 << 3) | 2; // ModelProto.graph
constexpr uint8_t kTensorRawDataTag = (9 << 3) | 2; // TensorProto.raw_data

// The tag and length of a length-delimited field (tags below 16 take one byte).
std::string fieldHeader(uint8_t tag, uint64_t value)
{
    std::string out(1, static_cast<char>(tag));
    do {
        uint8_t byte = value & 0x7F;
        value >>= 7;
        out.push_back(static_cast<char>(value ? byte | 0x80 : byte));
    } while (value);
    return out;
}

uint64_t fieldSize(uint64_t payload)
{
    return 1 + CodedOutputStream::VarintSize64(payload) + payload;
}

} // namespace

Status writeExternal(
    const SyntheticModel& model, const fs::path& path, const ExternalOptions& options)
{
    const std::string dataName
        = options.dataName.empty() ? path.filename().string() + ".data" : options.dataName;
    onnx::ModelProto proto = model.proto;
    auto* graph = proto.mutable_graph();
    std::optional<BufferedFile> data;
    for (const auto& w : model.weights) {
        auto& t = *graph->add_initializer();
        describe(t, w);
        WeightFill fill(w.seed, w.dataType);
        if (w.bytes == 0 || w.bytes < options.threshold) {
            std::string raw(w.bytes, '\0');
            fill.fill(std::as_writable_bytes(std::span(raw.data(), raw.size())));
            t.set_raw_data(std::move(raw));
            continue;
        }
        if (!data) {
            auto created = BufferedFile::create(path.parent_path() / dataName);
            if (!created)
                return created.error();
            data.emplace(std::move(*created));
        }
        if (options.alignment > 0 && w.bytes >= options.alignThreshold)
            if (Status s = data->alignTo(options.alignment); !s)
                return s;
        const uint64_t offset = data->position();
        if (Status s = data->writeFill(fill, w.bytes); !s)
            return s;
        addEntry(t, "location", dataName);
        addEntry(t, "offset", std::to_string(offset));
        addEntry(t, "length", std::to_string(w.bytes));
        t.set_data_location(onnx::TensorProto::EXTERNAL);
    }
    if (data)
        if (Status s = data->close(); !s)
            return s;
    return writeSmallFile(path, proto.SerializeAsString());
}

Status writeInline(const SyntheticModel& model, const fs::path& path)
{
    // The model is written as its small fields, then the graph field whose initializers carry
    // their raw_data streamed last; protobuf parsers accept fields in any order.
    onnx::ModelProto head = model.proto;
    head.clear_graph();
    const std::string graphHead = model.proto.graph().SerializeAsString();
    std::vector<std::string> tensorHeads;
    uint64_t graphBytes = graphHead.size();
    for (const auto& w : model.weights) {
        onnx::TensorProto t;
        describe(t, w);
        tensorHeads.push_back(t.SerializeAsString());
        graphBytes += fieldSize(tensorHeads.back().size() + fieldSize(w.bytes));
    }
    const std::string modelHead = head.SerializeAsString();
    const uint64_t total = modelHead.size() + fieldSize(graphBytes);
    if (total >= static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
        return Error::usage(path.string() + ": an inline model of " + std::to_string(total)
            + " bytes would pass the 2 GiB protobuf limit; use --storage external");

    auto file = BufferedFile::create(path);
    if (!file)
        return file.error();
    Status status; // sticky: after the first failure nothing more is written
    auto put = [&](const std::string& bytes) {
        if (status)
            status = file->write(bytesOf(bytes));
    };
    put(modelHead);
    put(fieldHeader(kModelGraphTag, graphBytes));
    put(graphHead);
    for (size_t i = 0; i < model.weights.size(); ++i) {
        const auto& w = model.weights[i];
        put(fieldHeader(kGraphInitializerTag, tensorHeads[i].size() + fieldSize(w.bytes)));
        put(tensorHeads[i]);
        put(fieldHeader(kTensorRawDataTag, w.bytes));
        WeightFill fill(w.seed, w.dataType);
        if (status)
            status = file->writeFill(fill, w.bytes);
    }
    if (!status)
        return status;
    return file->close();
}

} // namespace repack::bench
