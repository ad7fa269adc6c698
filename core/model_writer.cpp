#include "model_writer.h"

#include "posix_file.h"

#include <onnx/onnx_pb.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <climits>

namespace repack {

Result<uint64_t> writeModel(
    const onnx::ModelProto& model, int fd, const std::filesystem::path& path)
{
    const size_t size = model.ByteSizeLong();
    if (size > static_cast<size_t>(INT_MAX))
        return Error{path.string() + ": the model would be " + std::to_string(size)
            + " bytes, past protobuf's 2 GiB limit; move tensors to external data"};
    {
        google::protobuf::io::FileOutputStream stream(fd, 1 << 20);
        {
            google::protobuf::io::CodedOutputStream coded(&stream);
            coded.SetSerializationDeterministic(true);
            model.SerializeWithCachedSizes(&coded);
            if (coded.HadError())
                return Error{systemMessage("cannot write", path, stream.GetErrno())};
        }
        if (!stream.Flush())
            return Error{systemMessage("cannot write", path, stream.GetErrno())};
    }
    if (Status s = fsyncFile(fd, path); !s)
        return s.error();
    return static_cast<uint64_t>(size);
}

} // namespace repack
