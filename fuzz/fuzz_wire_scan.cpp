// Target "wire_scan": any bytes through scanModel, checked against protobuf itself. Whenever
// protobuf parses the bytes as a ModelProto, the scan succeeds, the skeleton parses too and
// putting the payloads back into the tensors their paths name gives exactly protobuf's
// own parse (what Model::load relies on). The scan never reads outside the input (ASan sees
// the input as an exactly-sized heap buffer).
#include "fuzz_support.h"

#include "core/model/wire_scan.h"

#include <onnx/onnx_pb.h>

#include <limits>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace repack;
    // A copy of exactly `size` bytes: reading one past it is a heap-buffer-overflow.
    const std::vector<std::byte> file(
        reinterpret_cast<const std::byte*>(data), reinterpret_cast<const std::byte*>(data) + size);
    // Payloads of at least 8 bytes are stripped: small enough that inputs the fuzzer grows
    // have some, large enough to keep both kinds.
    constexpr uint64_t kMinStripped = 8;
    auto scan = scanModel(file, "fuzz.onnx", kMinStripped);
    onnx::ModelProto full;
    const bool parses
        = size <= size_t(std::numeric_limits<int>::max()) && full.ParseFromArray(data, int(size));
    if (!scan) {
        fuzz::require(!scan.error().message.empty(), "a scan error without a message");
        // Model::load would refuse a model protobuf (and so python3-onnx) reads.
        fuzz::require(!parses, "the scan refuses what protobuf parses: " + scan.error().message);
        return 0;
    }
    for (const RawPayload& p : scan->payloads) {
        fuzz::require(
            p.offset <= size && p.length <= size - p.offset, "a payload outside the file");
        fuzz::require(
            p.stripped == (p.length >= kMinStripped), "stripped disagrees with the minimum");
    }
    fuzz::require(scan->changed || scan->skeleton.empty(), "a skeleton for an unchanged scan");

    if (!parses)
        return 0;
    onnx::ModelProto rebuilt;
    const bool parsed = scan->changed ? rebuilt.ParseFromString(scan->skeleton)
                                      : rebuilt.ParseFromArray(data, int(size));
    fuzz::require(parsed, "protobuf parses the file but not its skeleton");
    for (const RawPayload& p : scan->payloads) {
        onnx::TensorProto* tensor = tensorAt(rebuilt, p.path);
        fuzz::require(tensor != nullptr, "a payload's path leads to no tensor");
        // In file order, every payload: protobuf keeps a tensor's last one.
        tensor->set_raw_data(reinterpret_cast<const char*>(data) + p.offset, p.length);
    }
    fuzz::require(rebuilt.SerializeAsString() == full.SerializeAsString(),
        "skeleton plus payloads differs from protobuf's parse of the file");
    return 0;
}
