#include "audit.h"

#include "core/dtype.h"
#include "core/format.h"
#include "core/model/model.h"
#include "core/plan/dedupe.h"
#include "core/plan/file_layout.h"
#include "core/plan/targets.h"
#include "readers.h"

#include <onnx/onnx_pb.h>

#include <unordered_set>

namespace repack {
namespace {

constexpr uint64_t kProtobufLimit = 2ull << 30;
constexpr uint64_t kPageAlignment = 4096;

void warn(std::vector<Problem>& out, const std::string& tensor, std::string_view code,
    std::string message)
{
    out.push_back({Severity::Warning, tensor, std::string(code), std::move(message)});
}

void alignment(const Model& model, const AuditOptions& options, std::vector<Problem>& out)
{
    for (const TensorInfo& t : model.tensors()) {
        if (!t.isExternal() || t.byteSize() < options.largeTensor)
            continue;
        const std::string where = t.qualifiedName() + ": " + formatBytes(t.byteSize())
            + " at offset " + std::to_string(t.external->offset) + " of " + t.external->location();
        if (t.external->offset % kPageAlignment != 0)
            warn(out, t.qualifiedName(), code::NotMappable,
                where
                    + " is not 4 KiB-aligned, so readers cannot memory-map it and copy it to "
                      "memory instead; fix: onnx-repack repack (aligns tensors of 1 MiB and "
                      "more to 4 KiB), or --target ort for 64 KiB");
        else if (options.alignment >= kWindowsMapGranularity
            && t.external->offset % options.alignment != 0)
            warn(out, t.qualifiedName(), code::NotMappableOnWindows,
                where + " is not " + formatBytes(options.alignment)
                    + "-aligned, so ONNX Runtime before 1.23 cannot memory-map it on Windows; "
                      "fix: onnx-repack repack --target ort");
    }
}

void fileSizes(const Model& model, const AuditOptions& options, std::vector<Problem>& out)
{
    const std::vector<FileLayout> layouts
        = computeLayout(model, gapAlignment(options), LayoutDetail::Totals);
    // Who else reads a file is asked only of those with orphaned bytes: the folder is not
    // searched for a model that has none.
    std::vector<FileLayout> orphaned;
    if (options.orphanedBytes)
        std::copy_if(layouts.begin(), layouts.end(), std::back_inserter(orphaned),
            [](const FileLayout& f) { return f.orphanedBytes > 0; });
    const std::vector<bool> own = readOnlyBy(model, orphaned);
    for (size_t i = 0; i < orphaned.size(); ++i)
        if (own[i])
            out.push_back(orphanedBytesWarning(model.path().filename().string(), orphaned[i]));
    for (const FileLayout& f : layouts) {
        if (f.bytes >= kBrowserBufferLimit)
            warn(out, {}, code::BrowserFileLimit,
                "data file " + f.location + " holds " + std::to_string(f.bytes)
                    + " bytes, past the 0x7fe00000 bytes a browser ArrayBuffer takes: "
                      "transformers.js cannot load it; fix: onnx-repack repack --target web");
    }
    if (model.fileBytes() >= kProtobufLimit / 10 * 8)
        warn(out, {}, code::ProtobufNearLimit,
            model.path().filename().string() + " is " + formatBytes(model.fileBytes())
                + ", near protobuf's 2 GiB limit: adding to it may make it unreadable; fix: "
                  "onnx-repack repack --threshold 1KiB moves tensors of 1 KiB and more to "
                  "external data");
}

void unusedInitializers(const Model& model, std::vector<Problem>& out)
{
    for (const TensorInfo& t : model.tensors()) {
        if (!t.unusedInitializer)
            continue;
        warn(out, t.qualifiedName(), code::UnusedInitializer,
            t.qualifiedName() + ": no node and no graph output uses it ("
                + formatBytes(t.byteSize())
                + " nobody reads); fix: remove it from the graph (onnx-repack changes storage, "
                  "not graphs)");
    }
}

void duplicateBytes(const Model& model, const AuditOptions& options, std::vector<Problem>& out)
{
    std::vector<size_t> candidates;
    for (size_t i = 0; i < model.tensors().size(); ++i)
        if (model.tensors()[i].byteSize() >= options.duplicateMin)
            candidates.push_back(i);
    auto groups = findIdenticalTensors(model, candidates, options.progress, options.cancel);
    if (!groups)
        return; // unreadable tensors have problems of their own; a cancelled audit says less
    for (const IdenticalGroup& g : *groups) {
        if (g.copies < 2)
            continue; // already stored once
        const TensorInfo& first = model.tensors()[g.tensors.front()];
        const uint64_t wasted = (g.copies - 1) * first.byteSize();
        std::string names;
        for (size_t k = 0; k < g.tensors.size() && k < 4; ++k)
            names += (k ? ", " : "") + model.tensors()[g.tensors[k]].qualifiedName();
        if (g.tensors.size() > 4)
            names += " and " + std::to_string(g.tensors.size() - 4) + " more";
        const auto type = dtype::name(first.dataType);
        warn(out, first.qualifiedName(), code::DuplicateBytes,
            names + " hold identical bytes (" + std::string(type ? *type : "?") + " "
                + formatShape(first.shape) + ") in " + std::to_string(g.copies)
                + " copies: " + formatBytes(wasted) + " (" + std::to_string(wasted)
                + " bytes) wasted; fix: onnx-repack repack --dedupe stores them once");
    }
}

} // namespace

std::vector<bool> readOnlyBy(const Model& model, const std::vector<FileLayout>& files)
{
    std::vector<bool> own(files.size(), false);
    if (model.isRemote() || files.empty())
        return own;
    std::vector<std::filesystem::path> paths;
    for (const FileLayout& f : files)
        paths.push_back(f.path);
    const std::vector<Readers> readers
        = readersOf(paths, ReaderSearch{{model.baseDir()}, {model.path()}});
    for (size_t i = 0; i < files.size(); ++i)
        own[i] = readers[i].none();
    return own;
}

Problem orphanedBytesWarning(const std::string& modelName, const FileLayout& f)
{
    return {Severity::Warning, {}, std::string(code::OrphanedBytes),
        "data file " + f.location + " holds " + formatBytes(f.orphanedBytes) + " ("
            + std::to_string(f.orphanedBytes)
            + " bytes) that no tensor reads (orphaned: left where tensors were, as by moving "
              "tensors out of it while the others keep their place); fix: compact it "
              "(onnx-repack repack "
            + modelName + " -o " + modelName + " --keep --compact " + f.location
            + "; in the desktop app, Compact " + f.location + " in the layout map)"};
}

std::vector<Problem> auditModel(const Model& model, const AuditOptions& options)
{
    std::vector<Problem> out;
    alignment(model, options, out);
    fileSizes(model, options, out);
    unusedInitializers(model, out);
    if (options.compareBytes)
        duplicateBytes(model, options, out);
    return out;
}

} // namespace repack
