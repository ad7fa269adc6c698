#include "dedupe.h"

#include "core/checksum.h"
#include "core/dtype.h"
#include "core/mapped_memory.h"
#include "core/model/model.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

namespace repack {
namespace {

constexpr size_t kSampleBytes = 4096; // from each end: different weights differ here already
constexpr size_t kHashChunk = 64u << 20; // progress and cancellation granularity

// What must be equal before bytes are compared at all.
using ShapeKey = std::tuple<int32_t, Dims, uint64_t>;

// Where a tensor's bytes are stored: tensors with the same external range are one copy.
struct Copy {
    TensorRef tensor; // the first tensor stored there
    std::vector<TensorRef> sharing; // it and the others at the same range
};

// The first and last kSampleBytes of `bytes`, read into memory sized before the read.
Result<std::string> sample(const TensorInfo& tensor, const TensorBytes& tensorBytes)
{
    const auto bytes = tensorBytes.bytes();
    const size_t head = std::min(bytes.size(), kSampleBytes);
    const size_t tail = std::min(bytes.size() - head, kSampleBytes);
    std::string out(head + tail, '\0');
    Status s = readMapped(tensorBytes.where(tensor), [&] {
        std::memcpy(out.data(), bytes.data(), head);
        std::memcpy(out.data() + head, bytes.data() + bytes.size() - tail, tail);
    });
    if (!s)
        return s.error();
    return out;
}

class Finder {
public:
    Finder(std::span<const Model* const> models, const ProgressCallback& progress,
        const CancelToken* cancel)
        : m_models(models)
        , m_progressCallback(progress)
        , m_cancel(cancel)
    {
    }

    Status cancelled() const
    {
        if (m_cancel && m_cancel->isCancelled())
            return Error{"cancelled while comparing tensor bytes", ErrorKind::Cancelled};
        return {};
    }

    Result<TensorBytes> read(TensorRef t) const { return m_models[t.model]->read(t.tensor); }
    const TensorInfo& info(TensorRef t) const { return m_models[t.model]->tensors()[t.tensor]; }

    // SHA-1 of `bytes`, reporting progress and checking for cancellation between chunks.
    Result<std::string> hash(TensorRef tensor, const TensorBytes& tensorBytes)
    {
        const auto bytes = tensorBytes.bytes();
        Sha1 sha;
        for (size_t done = 0; done < bytes.size();) {
            const size_t piece = std::min(kHashChunk, bytes.size() - done);
            if (Status s = readMapped(tensorBytes.where(info(tensor)),
                    [&] { sha.update(bytes.subspan(done, piece)); });
                !s)
                return s.error();
            done += piece;
            m_progress.bytesDone += piece;
            m_progress.tensor = info(tensor).name;
            if (m_progressCallback)
                m_progressCallback(m_progress);
            if (Status s = cancelled(); !s)
                return s.error();
        }
        return sha.hexDigest();
    }

    // Splits `copies` (same dtype, shape, size) into groups of equal bytes.
    Status group(const std::vector<Copy>& copies, std::vector<IdenticalAcross>& out)
    {
        // Sample first, so only likely duplicates are hashed in full.
        std::map<std::string, std::vector<const Copy*>> bySample;
        for (const Copy& c : copies) {
            auto bytes = read(c.tensor);
            if (!bytes)
                return bytes.error();
            auto key = sample(info(c.tensor), *bytes);
            if (!key)
                return key.error();
            bySample[*key].push_back(&c);
        }
        for (auto& [key, similar] : bySample) {
            if (similar.size() < 2) { // unlike the others: a group only when already shared
                if (Status s = confirm(similar, out); !s)
                    return s;
                continue;
            }
            std::map<std::string, std::vector<const Copy*>> byHash;
            for (const Copy* c : similar) {
                auto bytes = read(c->tensor);
                if (!bytes)
                    return bytes.error();
                auto digest = hash(c->tensor, *bytes);
                if (!digest)
                    return digest.error();
                byHash[*digest].push_back(c);
            }
            for (auto& [digest, equal] : byHash)
                if (Status s = confirm(equal, out); !s)
                    return s;
        }
        return {};
    }

    Progress m_progress;

private:
    // Copies with equal hashes: compared byte for byte against the first before grouping.
    Status confirm(const std::vector<const Copy*>& equal, std::vector<IdenticalAcross>& out)
    {
        IdenticalAcross g;
        auto first = read(equal.front()->tensor);
        if (!first)
            return first.error();
        for (const Copy* c : equal) {
            if (c != equal.front()) {
                auto bytes = read(c->tensor);
                if (!bytes)
                    return bytes.error();
                const auto a = first->bytes();
                const auto b = bytes->bytes();
                bool same = a.size() == b.size();
                if (Status s = readMapped(first->where(info(equal.front()->tensor)) + " or "
                            + bytes->where(info(c->tensor)),
                        [&] { same = same && std::memcmp(a.data(), b.data(), a.size()) == 0; });
                    !s)
                    return s;
                if (!same)
                    continue; // a SHA-1 collision: not shared
            }
            g.tensors.insert(g.tensors.end(), c->sharing.begin(), c->sharing.end());
            ++g.copies;
        }
        if (g.tensors.size() >= 2) {
            std::sort(g.tensors.begin(), g.tensors.end());
            out.push_back(std::move(g));
        }
        return {};
    }

    std::span<const Model* const> m_models;
    const ProgressCallback& m_progressCallback;
    const CancelToken* m_cancel;
};

} // namespace

Result<std::vector<IdenticalAcross>> findIdenticalAcross(std::span<const Model* const> models,
    const std::vector<TensorRef>& candidates, const ProgressCallback& progress,
    const CancelToken* cancel)
{
    std::map<ShapeKey, std::vector<TensorRef>> byShape;
    for (TensorRef ref : candidates) {
        const TensorInfo& t = models[ref.model]->tensors().at(ref.tensor);
        if (t.hasError || !t.bytes || *t.bytes == 0 || t.dataType == dtype::String)
            continue;
        byShape[{t.dataType, t.shape, *t.bytes}].push_back(ref);
    }
    Finder finder(models, progress, cancel);
    // Collapse tensors at one external range into one copy; count what will be hashed.
    std::vector<std::vector<Copy>> buckets;
    for (auto& [key, members] : byShape) {
        if (members.size() < 2)
            continue;
        std::vector<Copy> copies;
        // External tensors at one range of one file are one copy (a map: buckets of thousands
        // of same-shaped tensors made a scan of the copies so far quadratic).
        std::map<std::pair<FileId, uint64_t>, size_t> atRange;
        for (TensorRef ref : members) {
            const TensorInfo& t = finder.info(ref);
            if (!t.isExternal() || !t.external->file) {
                copies.push_back({ref, {ref}});
                continue;
            }
            const FileId file = t.external->file->identity().id;
            auto [it, fresh] = atRange.emplace(std::pair(file, t.external->offset), copies.size());
            if (fresh)
                copies.push_back({ref, {ref}});
            else
                copies[it->second].sharing.push_back(ref);
        }
        finder.m_progress.bytesTotal += std::get<2>(key) * copies.size();
        buckets.push_back(std::move(copies));
    }
    std::vector<IdenticalAcross> out;
    for (const auto& copies : buckets) {
        if (Status s = finder.cancelled(); !s)
            return s.error();
        if (copies.size() == 1) { // already one range: identical without reading
            if (copies.front().sharing.size() >= 2)
                out.push_back({copies.front().sharing, 1});
            continue;
        }
        if (Status s = finder.group(copies, out); !s)
            return s.error();
    }
    std::sort(out.begin(), out.end(), [](const IdenticalAcross& a, const IdenticalAcross& b) {
        return a.tensors.front() < b.tensors.front();
    });
    return out;
}

Result<std::vector<IdenticalGroup>> findIdenticalTensors(const Model& model,
    const std::vector<size_t>& candidates, const ProgressCallback& progress,
    const CancelToken* cancel)
{
    const Model* const models[] = {&model};
    std::vector<TensorRef> refs;
    refs.reserve(candidates.size());
    for (size_t i : candidates)
        refs.push_back({0, i});
    auto across = findIdenticalAcross(models, refs, progress, cancel);
    if (!across)
        return across.error();
    std::vector<IdenticalGroup> out;
    out.reserve(across->size());
    for (const IdenticalAcross& group : *across) {
        IdenticalGroup g{{}, group.copies};
        for (TensorRef ref : group.tensors)
            g.tensors.push_back(ref.tensor);
        out.push_back(std::move(g));
    }
    return out;
}

} // namespace repack
