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
    const std::string expected = full.SerializeAsString();
    fuzz::require(rebuilt.SerializeAsString() == expected,
        "skeleton plus payloads differs from protobuf's parse of the file");

    // Every other initializer of the main graph, and its nodes of odd tensors only (or none),
    // left out of the skeleton and spliced back into protobuf's serialization of it
    // (Model::loadProtosLeavingOut, then writeModel): the same model again.
    const ElideRule everyOther{[](uint64_t i) { return i % 2 == 1; }};
    auto lean = scanModel(file, "fuzz.onnx", kMinStripped, everyOther);
    fuzz::require(lean.ok(), "leaving initializers out fails a scan that succeeds");
    onnx::ModelProto skeleton;
    fuzz::require(lean->changed ? skeleton.ParseFromString(lean->skeleton)
                                : skeleton.ParseFromArray(data, int(size)),
        "protobuf parses the file but not its skeleton without initializers");
    for (const RawPayload& p : lean->payloads) {
        onnx::TensorProto* tensor = tensorAt(skeleton, p.path);
        fuzz::require(tensor != nullptr, "a payload's path leads to no tensor of the skeleton");
        tensor->set_raw_data(reinterpret_cast<const char*>(data) + p.offset, p.length);
    }
    const std::string serialized = skeleton.SerializeAsString();
    const PayloadRule none
        = [](std::span<const std::byte>) -> std::optional<PayloadReplacement> { return {}; };
    auto back = spliceModel(std::as_bytes(std::span(serialized.data(), serialized.size())),
        "fuzz.onnx", none, &lean->elided);
    fuzz::require(back.ok() && back->inserts.empty(), "the initializers left out cannot go back");
    onnx::ModelProto again;
    fuzz::require(again.ParseFromString(back->bytes) && again.SerializeAsString() == expected,
        "the initializers left out and put back give another model");
    return 0;
}
