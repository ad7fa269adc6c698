// Target "model_load": any bytes as a .onnx file through Model::load (wire scan, skeleton
// parse, tensor index, validation), then everything inspect does with a loaded model: read
// every tensor, bring the in-file payloads into the protos and back, lay out the data files
// and write the inspect report. The folder holds nothing but the model.
#include "fuzz_support.h"

#include "core/inspect/report.h"
#include "core/model/model.h"
#include "core/plan/file_layout.h"

#include <onnx/onnx_pb.h>

#include <optional>
#include <ostream>
#include <streambuf>

namespace {

// Swallows the report: only producing it matters here.
struct NullBuffer : std::streambuf {
    int overflow(int c) override { return c; }
    std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace repack;
    static const std::filesystem::path file = fuzz::scratchDir("model_load") / "model.onnx";
    fuzz::writeFile(file, fuzz::bytesOf(data, size));

    auto loaded = Model::load(file);
    if (!loaded) {
        fuzz::require(!loaded.error().message.empty(), "a load error without a message");
        return 0;
    }
    Model& model = **loaded;
    for (size_t i = 0; i < model.tensors().size(); ++i) {
        const TensorInfo& info = model.tensors()[i];
        auto bytes = model.read(i);
        fuzz::require(
            bytes.ok() || !bytes.error().message.empty(), "a read error without a message");
        if (bytes && info.inlineRange)
            fuzz::require(bytes->bytes().size() == info.inlineRange->length,
                "an in-file payload read back with another length than its range");
    }

    // What a save does first: payloads back into the protos, then out of them again.
    std::vector<std::optional<std::string>> mapped(model.tensors().size());
    for (size_t i = 0; i < model.tensors().size(); ++i)
        if (model.tensors()[i].inlineRange) {
            auto bytes = model.read(i); // fails for a tensor with problems
            if (bytes)
                mapped[i].emplace(
                    reinterpret_cast<const char*>(bytes->bytes().data()), bytes->bytes().size());
        }
    if (model.materializeInline().ok()) {
        for (size_t i = 0; i < model.tensors().size(); ++i) {
            const TensorInfo& info = model.tensors()[i];
            if (mapped[i] && info.proto->raw_data() != *mapped[i])
                fuzz::require(false,
                    info.qualifiedName() + ": the materialized payload ("
                        + std::to_string(info.proto->raw_data().size())
                        + " bytes) differs from the mapped bytes at "
                        + std::to_string(info.inlineRange->offset) + "+"
                        + std::to_string(info.inlineRange->length));
        }
        model.releaseInline();
    }

    (void)computeLayout(model, kDefaultAlignment);
    NullBuffer sink;
    std::ostream out(&sink);
    writeInspectJson(out, model);
    return 0;
}
