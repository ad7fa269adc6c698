// Reading a tensor's bytes: mapped from its data file or the .onnx, or converted from its
// typed fields; and the external data paths of a model file found without loading it.
#include "model.h"

#include "core/mapped_memory.h"
#include "core/posix_file.h"
#include "model_start.h"
#include "tensor_index.h"
#include "typed_data.h"

#include <onnx/onnx_pb.h>

#include <google/protobuf/io/coded_stream.h>

namespace fs = std::filesystem;

namespace repack {

Result<std::vector<std::byte>> Model::typedBytesFromFile(size_t index) const
{
    const TensorInfo& info = m_tensors[index];
    auto it = m_typedSpans.find(index);
    if (it == m_typedSpans.end() || !m_modelFile)
        return Error::internal(info.qualifiedName() + ": its typed data is not loaded");
    // protobuf merges the occurrences of a message in order, as the index read them.
    onnx::TensorProto tensor;
    std::string failure;
    for (const FileRange& range : it->second) {
        auto read = m_modelFile->read(range.offset, range.length);
        if (!read)
            return Error{info.qualifiedName() + ": " + read.error().message, read.error().kind};
        const std::span<const std::byte> view = read->bytes();
        Status s
            = readMapped(info.qualifiedName() + " (in " + m_modelFile->path().string() + ")", [&] {
                  google::protobuf::io::CodedInputStream coded(
                      reinterpret_cast<const uint8_t*>(view.data()), static_cast<int>(view.size()));
                  if (!tensor.MergeFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
                      failure = info.qualifiedName() + ": protobuf cannot read its TensorProto in "
                          + m_modelFile->path().string();
              });
        if (!s)
            return s.error();
        if (!failure.empty())
            return Error::corrupt(failure);
    }
    return typedDataToBytes(tensor);
}

Result<TensorBytes> Model::read(size_t index) const
{
    if (index >= m_tensors.size())
        return Error::usage("tensor index " + std::to_string(index) + " out of range");
    const TensorInfo& info = m_tensors[index];
    if (info.hasError)
        return Error::corrupt("cannot read " + info.qualifiedName() + ": " + firstErrorOf(info));
    switch (info.storage) {
    case Storage::External: {
        if (!info.external->file())
            return Error::corrupt(info.qualifiedName() + ": external data of '"
                + info.external->location() + "' is not readable (see the model's problems)");
        const uint64_t length = info.external->length.value_or(info.byteSize());
        auto bytes = info.external->file()->read(info.external->offset, length);
        if (!bytes)
            return Error{info.qualifiedName() + ": " + bytes.error().message, bytes.error().kind};
        return bytes;
    }
    case Storage::Raw: {
        if (info.inlineRange) {
            if (m_lender && info.inlineRange->length >= kInFileMinBytes) // the file leaves it out
                return m_lender(*info.inlineRange);
            if (!m_modelFile)
                return Error::internal(info.qualifiedName() + ": its raw_data is no longer mapped");
            auto bytes = m_modelFile->read(info.inlineRange->offset, info.inlineRange->length);
            if (!bytes)
                return Error{
                    info.qualifiedName() + ": " + bytes.error().message, bytes.error().kind};
            return bytes;
        }
        if (!info.proto && m_proto) { // left out of the protos
            auto tensor = leftOutTensor(index);
            if (!tensor)
                return tensor.error();
            const std::string& raw = tensor->raw_data();
            const auto* begin = reinterpret_cast<const std::byte*>(raw.data());
            return TensorBytes::own(std::vector<std::byte>(begin, begin + raw.size()));
        }
        if (!info.proto)
            return Error::internal(info.qualifiedName() + ": its raw_data is not loaded");
        const std::string& raw = info.proto->raw_data();
        return TensorBytes::view(std::as_bytes(std::span(raw.data(), raw.size())));
    }
    case Storage::Typed: {
        Result<std::vector<std::byte>> bytes = Error::internal("not read");
        if (info.proto) {
            bytes = typedDataToBytes(*info.proto);
        } else if (m_proto) { // left out of the protos
            auto tensor = leftOutTensor(index);
            bytes = tensor ? typedDataToBytes(*tensor)
                           : Result<std::vector<std::byte>>(tensor.error());
        } else {
            bytes = typedBytesFromFile(index);
        }
        if (!bytes)
            return Error{info.qualifiedName() + ": " + bytes.error().message, bytes.error().kind};
        return TensorBytes::own(std::move(*bytes));
    }
    }
    return Error::internal(info.qualifiedName() + ": unknown storage");
}

Result<std::vector<fs::path>> externalDataPaths(const fs::path& modelPath)
{
    return guardMemory(modelPath.string() + ": reading its external data locations",
        [&]() -> Result<std::vector<fs::path>> {
            auto fd = UniqueFd::openRead(modelPath);
            if (!fd)
                return fd.error();
            auto identity = identityOf(fd->get());
            if (!identity)
                return Error{
                    modelPath.string() + ": " + identity.error().message, identity.error().kind};
            if (identity->size == 0)
                return Error::corrupt(modelPath.string() + ": empty file");
            const fs::path absolute = fs::absolute(modelPath).lexically_normal();
            DataFile file(absolute, *identity);
            auto bytes = file.view(0, identity->size);
            if (!bytes)
                return bytes.error();
            Result<ExternalLocations> found = Error::internal("not run");
            const ReleaseRule release
                = [&file](uint64_t offset, uint64_t length) { file.releasePages(offset, length); };
            if (Status s = readMapped(modelPath.string(),
                    [&] {
                        if (Status start
                            = checkModelStart(*bytes, identity->size, modelPath.string());
                            !start)
                            found = start.error();
                        else
                            found = externalLocations(*bytes, modelPath.string(), release);
                    });
                !s)
                return s.error();
            if (!found)
                return found.error();
            if (!found->isModel)
                return notAnOnnxModel(modelPath.string(), "no graph and no functions");
            std::vector<fs::path> out;
            for (const std::string& location : found->locations) {
                const fs::path written(location);
                if (!location.empty() && written.is_relative())
                    out.push_back((absolute.parent_path() / written).lexically_normal());
            }
            return out;
        });
}

} // namespace repack
