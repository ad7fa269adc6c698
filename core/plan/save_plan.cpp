#include "save_plan.h"

#include "core/dtype.h"
#include "core/file_names.h"
#include "core/format.h"
#include "core/model/model.h"
#include "core/model/safetensors.h"
#include "core/posix_file.h"
#include "dedupe.h"
#include "kept_layout.h"
#include "targets.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace fs = std::filesystem;

namespace repack {
namespace {

constexpr uint64_t kProtobufLimit = 2ull << 30;

// Whether tensor `t` goes external under `placement`, or an error naming it. Empty tensors
// never do.
Result<bool> decide(const TensorInfo& t, Placement placement, const SaveOptions& options)
{
    const bool isString = t.dataType == dtype::String;
    if (placement == Placement::External) {
        if (isString)
            return Error::usage(t.qualifiedName() + ": STRING tensors cannot be stored externally");
        if (!t.bytes)
            return Error::usage(t.qualifiedName() + ": its size is unknown, so it cannot be moved");
        if (t.mustStayInline())
            return Error::usage(t.qualifiedName() + " cannot be stored externally: it is "
                + *t.readAtGraphBuild
                + ", whose values readers need while building the graph (ONNX Runtime refuses "
                  "the model otherwise); keep it inline");
        // Even when pinned: onnx.load (1.12) reads a "length" of 0 as "to the end of the file",
        // so an empty tensor stored externally comes back holding the file's remaining bytes.
        return *t.bytes != 0;
    }
    if (placement == Placement::Inline || options.allInline)
        return false;
    if (isString || !t.bytes || *t.bytes == 0 || t.mustStayInline())
        return false;
    if (t.kind == TensorKind::Attribute && !options.includeAttributes)
        return false;
    return *t.bytes >= options.threshold;
}

// A reader's hard limit on data file size: a file past it names the largest tensor in it.
Status checkFileLimit(const Model& model, const SavePlan& plan, uint64_t limit)
{
    for (size_t f = 0; f < plan.files.size(); ++f) {
        if (plan.fileBytes[f] <= limit)
            continue;
        const auto& order = plan.fileOrder[f];
        const size_t biggest = *std::max_element(order.begin(), order.end(),
            [&](size_t a, size_t b) { return plan.tensors[a].length < plan.tensors[b].length; });
        return Error::usage("data file '" + plan.files[f] + "' would hold "
            + std::to_string(plan.fileBytes[f]) + " bytes, past the target's limit of "
            + std::to_string(limit) + " bytes per file; " + model.tensors()[biggest].qualifiedName()
            + " alone holds " + std::to_string(plan.tensors[biggest].length) + " bytes");
    }
    return {};
}

// A shard past the shard size holds one tensor that is larger on its own: say which.
void noteOversizedShards(const Model& model, SavePlan& plan, size_t shards, uint64_t shardSize)
{
    if (!shardSize)
        return;
    for (size_t f = 0; f < shards; ++f) {
        if (plan.fileBytes[f] <= shardSize || plan.fileOrder[f].empty())
            continue;
        const size_t tensor = plan.fileOrder[f].front();
        plan.notes.push_back(model.tensors()[tensor].qualifiedName() + " ("
            + formatBytes(plan.tensors[tensor].length) + ") is larger than the shard size ("
            + formatBytes(shardSize) + "): it has the data file '" + plan.files[f]
            + "' to itself, larger than that size");
    }
}

} // namespace

std::string saveDataFile(const fs::path& modelPath, const SaveOptions& options)
{
    if (!options.dataFile.empty())
        return options.dataFile;
    if (!options.dataSuffix.empty())
        return dataFileFor(modelPath, options.dataSuffix);
    if (options.format == DataFormat::Safetensors)
        return dataFileFor(modelPath, ".safetensors");
    return defaultDataFile(modelPath);
}

namespace {

// planSave's steps, in the order it runs them.

// The options that can never work, whatever the model; the save's default data file name.
Result<std::string> checkOptions(const fs::path& modelPath, const SaveOptions& options)
{
    const std::string dataFile = saveDataFile(modelPath, options);
    if (options.format == DataFormat::Safetensors && options.dedupe)
        return Error{"safetensors files cannot share one range between tensors: --dedupe and "
                     "the safetensors format do not go together",
            ErrorKind::Usage};
    if (Status s = checkDataFileName(dataFile); !s)
        return s.error();
    if (!validAlignment(options.alignment))
        return Error{
            "alignment " + std::to_string(options.alignment) + " " + std::string(kAlignmentRule),
            ErrorKind::Usage};
    return dataFile;
}

// Inline or external for every tensor, with the plan's byte counts; the external tensors'
// indices in declaration order. Refuses tensors that cannot go where they are sent.
Result<std::vector<size_t>> chooseStorage(
    const Model& model, const SaveOptions& options, SavePlan& plan)
{
    const bool safetensors = options.format == DataFormat::Safetensors;
    const auto& tensors = model.tensors();
    std::unordered_set<std::string> corrupt; // inline bytes that disagree with dtype x shape
    for (const auto& p : model.problems())
        if (p.code == code::InlineSizeMismatch)
            corrupt.insert(p.tensor);
    if (!options.placements.empty() && options.placements.size() != tensors.size())
        return Error::usage("the placement plan lists " + std::to_string(options.placements.size())
            + " tensors, the model has " + std::to_string(tensors.size()));

    plan.tensors.resize(tensors.size());
    std::vector<size_t> external;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const TensorInfo& t = tensors[i];
        Placement placement
            = options.placements.empty() ? Placement::Auto : options.placements[i].kind;
        if (!t.isExternal() && corrupt.count(t.qualifiedName())) {
            if (!options.allowCorrupt)
                return Error::corrupt(t.qualifiedName()
                    + ": its inline data disagrees with its dtype x shape; refusing to carry "
                      "corrupt bytes forward (--allow-corrupt keeps them inline as they are)");
            placement = Placement::Inline; // carried as it is, never reinterpreted
        }
        auto goesExternal = decide(t, placement, options);
        if (!goesExternal)
            return goesExternal.error();
        if (*goesExternal) {
            if (safetensors && safetensorsDtype(t.dataType).empty())
                return Error::usage(t.qualifiedName() + ": "
                    + std::string(dtype::name(t.dataType).value_or("its element type"))
                    + " has no safetensors dtype; keep it inline (--threshold, or a plan) or "
                      "save raw data files");
            if (safetensors && !safetensorsShapeFits(safetensorsDtype(t.dataType), t.shape))
                return Error::usage(t.qualifiedName()
                    + ": safetensors readers cannot compute the size of its shape (the product "
                      "of its dimensions overflows before its zero); keep it inline");
            if (t.hasError)
                return Error::corrupt(t.qualifiedName()
                    + ": cannot be saved until its problems are fixed: " + model.firstErrorOf(t));
            external.push_back(i);
            plan.externalBytes += t.byteSize();
            plan.movedToExternal += t.isExternal() ? 0 : 1;
        } else {
            if (t.isExternal() && t.hasError)
                return Error::corrupt(t.qualifiedName()
                    + ": its external data is unreadable, so it cannot be brought inline: "
                    + model.firstErrorOf(t));
            plan.inlineBytes += t.byteSize();
            plan.movedToInline += t.isExternal() ? 1 : 0;
        }
        plan.tensors[i].length = t.byteSize();
    }
    if (plan.inlineBytes >= kProtobufLimit)
        return Error::usage("keeping " + std::to_string(plan.inlineBytes)
            + " bytes of tensors inline would pass the 2 GiB protobuf limit"
            + (options.keepPlacement ? "; the save keeps every tensor where it is: name a data "
                                       "file ("
                        + options.dataOptionName + ") to store the large ones externally"
                                     : std::string()));
    return external;
}

// The order external tensors are written in: as declared, or by size (--order size).
// Safetensors files have no padding: larger elements first keep every tensor at a multiple of
// its element size (the data starts at a multiple of 8), as the reference writer does; readers
// that view the bytes as typed arrays need it.
void orderExternal(const std::vector<TensorInfo>& tensors, std::vector<size_t>& external,
    const SaveOptions& options)
{
    if (options.order == TensorOrder::SizeAscending)
        std::stable_sort(external.begin(), external.end(),
            [&](size_t a, size_t b) { return tensors[a].byteSize() < tensors[b].byteSize(); });
    if (options.format == DataFormat::Safetensors)
        std::stable_sort(external.begin(), external.end(), [&](size_t a, size_t b) {
            return dtype::bitsPerElement(tensors[a].dataType)
                > dtype::bitsPerElement(tensors[b].dataType);
        });
}

// External tensors by destination: the save's own data file (sharded), and the files tensors
// are pinned to, in the order their first tensor comes.
struct Destinations {
    std::vector<size_t> unpinned;
    std::vector<std::string> pinnedNames;
    std::vector<std::vector<size_t>> pinned; // parallel to pinnedNames
};

Result<Destinations> sortByDestination(const std::vector<TensorInfo>& tensors,
    const std::vector<size_t>& external, const SaveOptions& options, const std::string& dataFile)
{
    Destinations out;
    for (size_t i : external) {
        const std::string& where
            = options.placements.empty() ? std::string() : options.placements[i].location;
        if (where.empty()
            || fs::path(where).lexically_normal() == fs::path(dataFile).lexically_normal()) {
            out.unpinned.push_back(i);
            continue;
        }
        auto it = std::find(out.pinnedNames.begin(), out.pinnedNames.end(), where);
        if (it == out.pinnedNames.end()) {
            if (Status s = checkDataFileName(where); !s)
                return Error{tensors[i].qualifiedName() + ": " + s.error().message, s.error().kind};
            out.pinnedNames.push_back(where);
            out.pinned.emplace_back();
            it = out.pinnedNames.end() - 1;
        }
        out.pinned[static_cast<size_t>(it - out.pinnedNames.begin())].push_back(i);
    }
    return out;
}

// With dedupe, each tensor's first identical partner (by index); itself when none or no dedupe.
Result<std::vector<size_t>> dedupePartners(
    const Model& model, const std::vector<size_t>& external, const SaveOptions& options)
{
    std::vector<size_t> partner(model.tensors().size());
    std::iota(partner.begin(), partner.end(), size_t(0));
    if (!options.dedupe)
        return partner;
    auto groups = findIdenticalTensors(model, external, options.progress, options.cancel);
    if (!groups)
        return groups.error();
    for (const auto& g : *groups)
        for (size_t i : g.tensors)
            partner[i] = g.tensors.front();
    return partner;
}

// Safetensors: every external tensor's name in the headers, unique across the files.
std::vector<std::string> safetensorsNames(
    const std::vector<TensorInfo>& tensors, const std::vector<size_t>& external)
{
    std::vector<std::string> names(tensors.size());
    std::unordered_set<std::string> bases;
    for (size_t i : external)
        bases.insert(safetensorsName(tensors[i]));
    std::unordered_set<std::string> given{"__metadata__"}; // the format's own key
    for (size_t i : external) {
        const std::string base = safetensorsName(tensors[i]);
        std::string name = base;
        for (int n = 2; given.count(name) || (name != base && bases.count(name)); ++n)
            name = base + "_" + std::to_string(n);
        given.insert(name);
        names[i] = std::move(name);
    }
    return names;
}

// Lays tensors out file by file into a plan. A tensor that does not fit the current shard
// starts a new one, so a tensor larger than the shard size gets a shard of its own. A tensor
// identical to one already placed in the same group gets its range: it is written there again
// (the same bytes), so every tensor stays in fileOrder and gets its checksum. A safetensors
// shard keeps room for its header (an upper bound, grown with each tensor).
class FileLayouter {
public:
    FileLayouter(const std::vector<TensorInfo>& tensors, const SaveOptions& options,
        const std::vector<size_t>& partner, const std::vector<std::string>& names, SavePlan& plan)
        : m_tensors(tensors)
        , m_options(options)
        , m_partner(partner)
        , m_names(names)
        , m_plan(plan)
        , m_safetensors(options.format == DataFormat::Safetensors)
    {
    }

    // Places `group` in new files of at most `shardSize` bytes (0: one file); how many it took.
    // `compact` (keeping placement, SaveOptions::compactFiles): kept offsets give the order
    // only, the tensors go back to back.
    size_t place(const std::vector<size_t>& group, uint64_t shardSize, bool compact = false)
    {
        const size_t first = m_plan.fileOrder.size();
        uint64_t reserve = emptyHeader();
        std::unordered_map<size_t, size_t> placed; // partner -> the tensor placed for it
        // Keeping placement: tensors in the order of the offsets they keep, and the ranges
        // placed so far (a range two tensors share stays shared).
        std::vector<size_t> order = group;
        std::map<std::pair<uint64_t, uint64_t>, size_t> keptRanges;
        if (m_options.keepPlacement)
            std::stable_sort(order.begin(), order.end(),
                [&](size_t a, size_t b) { return keptOffset(a) < keptOffset(b); });
        for (size_t i : order) {
            if (auto copy = placed.find(m_partner[i]); copy != placed.end()) {
                m_plan.tensors[i] = m_plan.tensors[copy->second];
                m_plan.fileOrder[static_cast<size_t>(m_plan.tensors[i].file)].push_back(i);
                m_plan.sharedBytes += m_plan.tensors[i].length;
                ++m_plan.sharedTensors;
                continue;
            }
            placed.emplace(m_partner[i], i);
            const uint64_t bytes = m_tensors[i].byteSize();
            if (m_plan.fileOrder.size() == first)
                startFile();
            uint64_t offset = m_safetensors
                ? m_plan.fileBytes.back()
                : placedOffset(m_plan.fileBytes.back(), bytes, m_options.alignmentRule());
            // Safetensors files have no gaps and no shared ranges: kept in order, laid out anew.
            if (const uint64_t keep = keptOffset(i); keep != kNoOffset && !m_safetensors) {
                const auto range = keptRanges.find({keep, bytes});
                if (range != keptRanges.end()) {
                    m_plan.tensors[i] = m_plan.tensors[range->second];
                    m_plan.fileOrder.back().push_back(i);
                    m_plan.sharedBytes += bytes;
                    ++m_plan.sharedTensors;
                    continue;
                }
                const bool kept = keep >= m_plan.fileBytes.back() && !shardSize;
                if (kept || compact)
                    keptRanges.emplace(std::pair(keep, bytes), i);
                if (kept && !compact)
                    offset = keep;
            }
            if (shardSize && !m_plan.fileOrder.back().empty()
                && offset + bytes + reserve + headerBound(i) > shardSize) {
                startFile();
                offset = 0;
                reserve = emptyHeader();
            }
            reserve += headerBound(i);
            m_plan.fileOrder.back().push_back(i);
            m_plan.tensors[i]
                = {true, static_cast<int>(m_plan.fileOrder.size() - 1), offset, bytes};
            m_plan.fileBytes.back() = offset + bytes;
        }
        return m_plan.fileOrder.size() - first;
    }

private:
    static constexpr uint64_t kNoOffset = UINT64_MAX;
    // The offset tensor `i` keeps, when keeping placement; kNoOffset otherwise.
    uint64_t keptOffset(size_t i) const
    {
        if (!m_options.keepPlacement || i >= m_options.placements.size())
            return kNoOffset;
        return m_options.placements[i].offset.value_or(kNoOffset);
    }
    void startFile()
    {
        m_plan.fileOrder.emplace_back();
        m_plan.fileBytes.push_back(0);
    }
    uint64_t emptyHeader() const { return m_safetensors ? kSafetensorsEmptyHeaderBound : 0; }
    uint64_t headerBound(size_t i) const
    {
        return m_safetensors ? safetensorsEntryBound(
                   m_names[i], safetensorsDtype(m_tensors[i].dataType), m_tensors[i].shape)
                             : uint64_t(0);
    }

    const std::vector<TensorInfo>& m_tensors;
    const SaveOptions& m_options;
    const std::vector<size_t>& m_partner;
    const std::vector<std::string>& m_names;
    SavePlan& m_plan;
    const bool m_safetensors;
};

// Names the laid-out files: the shards of the data file, then the pinned files.
Status nameFiles(SavePlan& plan, const std::string& dataFile, size_t shards,
    const Destinations& destinations, const SaveOptions& options)
{
    if (options.maxShards && shards > options.maxShards)
        return Error::usage("the data file needs " + std::to_string(shards) + " files of at most "
            + formatBytes(options.shardSize) + "; the target allows "
            + std::to_string(options.maxShards));
    for (size_t f = 0; f < shards; ++f)
        plan.files.push_back(options.shardNaming == ShardNaming::Chunks
                ? chunkName(dataFile, f)
                : shardName(dataFile, f, shards));
    for (const auto& name : destinations.pinnedNames)
        plan.files.push_back(name);
    for (const auto& name : plan.files)
        if (std::count(plan.files.begin(), plan.files.end(), name) > 1)
            return Error::usage(
                "data file '" + name + "' is both a shard and a pinned destination");
    return {};
}

// Each safetensors file starts with its header; the tensors move past it.
Status addSafetensorsHeaders(
    SavePlan& plan, const std::vector<TensorInfo>& tensors, const std::vector<std::string>& names)
{
    for (size_t f = 0; f < plan.files.size(); ++f) {
        std::vector<SafetensorsEntry> entries;
        for (size_t i : plan.fileOrder[f])
            entries.push_back(
                {names[i], std::string(safetensorsDtype(tensors[i].dataType)), tensors[i].shape,
                    plan.tensors[i].offset, plan.tensors[i].offset + plan.tensors[i].length});
        plan.fileHeaders[f] = makeSafetensorsHeader(entries);
        const uint64_t shift = plan.fileHeaders[f].size();
        if (shift - 8 > kSafetensorsMaxHeader)
            return Error::usage("data file '" + plan.files[f]
                + "' would need a safetensors header of " + std::to_string(shift - 8)
                + " bytes, past the format's limit of " + std::to_string(kSafetensorsMaxHeader)
                + "; shard it (--shard-size) or keep small tensors inline");
        for (size_t i : plan.fileOrder[f])
            plan.tensors[i].offset += shift;
        plan.fileBytes[f] += shift;
    }
    return {};
}

} // namespace

Result<SavePlan> planSave(
    const Model& model, const fs::path& modelPath, const SaveOptions& requested)
{
    Result<SaveOptions> kept = SaveOptions();
    if (requested.keepPlacement) {
        kept = keptOptions(model, modelPath, requested);
        if (!kept)
            return kept.error();
    }
    const SaveOptions& options = requested.keepPlacement ? *kept : requested;
    const auto& tensors = model.tensors();
    const bool safetensors = options.format == DataFormat::Safetensors;
    auto dataFile = checkOptions(modelPath, options);
    if (!dataFile)
        return dataFile.error();

    SavePlan plan;
    plan.alignment = safetensors ? 0 : options.alignment;
    auto external = chooseStorage(model, options, plan);
    if (!external)
        return external.error();
    orderExternal(tensors, *external, options);
    auto destinations = sortByDestination(tensors, *external, options, *dataFile);
    if (!destinations)
        return destinations.error();
    auto partner = dedupePartners(model, *external, options);
    if (!partner)
        return partner.error();
    const std::vector<std::string> names
        = safetensors ? safetensorsNames(tensors, *external) : std::vector<std::string>();

    FileLayouter layouter(tensors, options, *partner, names, plan);
    const size_t shards = layouter.place(
        destinations->unpinned, options.shardSize, compactsFile(options, *dataFile));
    for (size_t k = 0; k < destinations->pinned.size(); ++k)
        layouter.place(
            destinations->pinned[k], 0, compactsFile(options, destinations->pinnedNames[k]));
    if (Status s = nameFiles(plan, *dataFile, shards, *destinations, options); !s)
        return s.error();
    plan.fileHeaders.resize(plan.files.size());
    if (safetensors)
        if (Status s = addSafetensorsHeaders(plan, tensors, names); !s)
            return s.error();
    if (options.shardSizeIsLimit && options.shardSize)
        if (Status s = checkFileLimit(model, plan, options.shardSize); !s)
            return s.error();
    noteOversizedShards(model, plan, shards, options.shardSize);
    return plan;
}

uint64_t usedBytes(const SavePlan& plan, size_t file)
{
    uint64_t used = 0;
    std::unordered_set<uint64_t> offsets; // a shared range has one offset and one length
    for (size_t i : plan.fileOrder[file])
        if (offsets.insert(plan.tensors[i].offset).second)
            used += plan.tensors[i].length;
    return used;
}

} // namespace repack
