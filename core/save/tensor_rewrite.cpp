#include "tensor_rewrite.h"

#include "core/model/model.h"
#include "data_writer.h"

#include <onnx/onnx_pb.h>

namespace repack {
namespace {

// A tensor with `original`'s identity and shape and no data.
void copyMetadata(const onnx::TensorProto& original, onnx::TensorProto& out)
{
    out.Clear();
    if (original.has_name()) // an unnamed attribute tensor stays unnamed
        out.set_name(original.name());
    out.set_data_type(original.data_type());
    *out.mutable_dims() = original.dims();
    if (original.has_doc_string())
        out.set_doc_string(original.doc_string());
    if (original.has_segment())
        *out.mutable_segment() = original.segment();
    // Fields newer than our ONNX 1.12 classes (e.g. metadata_props) survive as unknown fields.
    out.mutable_unknown_fields()->MergeFrom(original.unknown_fields());
}

void addEntry(onnx::TensorProto& t, const char* key, const std::string& value)
{
    auto* entry = t.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
}

} // namespace

TensorRewrite::TensorRewrite(Model& model)
    : m_model(model)
{
}

TensorRewrite::~TensorRewrite()
{
    if (!m_done)
        rollback();
}

Status TensorRewrite::apply(const SavePlan& plan, const std::vector<std::string>& locations,
    DataWriter& writer, const std::map<size_t, std::string>& checksums, Inline comingInline)
{
    const auto& tensors = m_model.tensors();
    for (size_t i = 0; i < tensors.size(); ++i) {
        const TensorInfo& info = tensors[i];
        const PlannedTensor& target = plan.tensors[i];
        if (!target.external && !info.isExternal())
            continue; // inline stays inline, untouched
        std::string inlineBytes;
        if (!target.external && comingInline == Inline::Read) {
            auto bytes = writer.readExternal(i);
            if (!bytes)
                return bytes.error();
            inlineBytes = std::move(*bytes);
        }
        auto original = std::make_unique<onnx::TensorProto>();
        original->Swap(info.proto);
        copyMetadata(*original, *info.proto);
        if (target.external) {
            info.proto->set_data_location(onnx::TensorProto::EXTERNAL);
            addEntry(*info.proto, "location", locations[static_cast<size_t>(target.file)]);
            addEntry(*info.proto, "offset", std::to_string(target.offset));
            addEntry(*info.proto, "length", std::to_string(target.length));
            if (auto it = checksums.find(i); it != checksums.end())
                addEntry(*info.proto, "checksum", it->second);
        } else {
            info.proto->set_raw_data(std::move(inlineBytes)); // empty when spliced later
        }
        m_entries.push_back({info.proto, std::move(original), target.external ? target.file : -1});
    }
    return {};
}

void TensorRewrite::relocate(const std::vector<std::string>& locations)
{
    for (auto& entry : m_entries) {
        if (entry.file < 0)
            continue;
        for (auto& kv : *entry.tensor->mutable_external_data())
            if (kv.key() == "location")
                kv.set_value(locations[static_cast<size_t>(entry.file)]);
    }
}

void TensorRewrite::rollback()
{
    for (auto& entry : m_entries)
        entry.tensor->Swap(entry.original.get());
    m_entries.clear();
    m_done = true;
}

void TensorRewrite::commit()
{
    m_entries.clear(); // frees the originals' data
    m_done = true;
}

} // namespace repack
