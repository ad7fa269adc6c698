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
constexpr size_t kHashChunk = 8u << 20; // progress, cancellation and page release granularity

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
        if (Status s = checksumsAvailable(); !s)
            return s.error();
        Sha1 sha;
        for (size_t done = 0; done < bytes.size();) {
            const size_t piece = std::min(kHashChunk, bytes.size() - done);
            if (Status s = readMapped(tensorBytes.where(info(tensor)),
                    [&] { sha.update(bytes.subspan(done, piece)); });
                !s)
                return s.error();
            tensorBytes.releasePages(done, piece);
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
        // Sample first, so only likely duplicates are read in full.
        std::map<std::string, std::vector<const Copy*>> bySample;
        for (const Copy& c : copies) {
            auto bytes = read(c.tensor);
            if (!bytes)
                return bytes.error();
            auto key = sample(info(c.tensor), *bytes);
            if (!key)
                return key.error();
            bytes->releasePages();
            bySample[*key].push_back(&c);
        }
        for (auto& [key, similar] : bySample) {
            std::vector<std::vector<const Copy*>> parts;
            if (similar.size() <= kCompareDirectly) {
                // Few copies: compared byte for byte with each part's first, no hash at all
                // (memcmp is several times faster than SHA-1, and equal bytes are read twice
                // either way).
                for (const Copy* c : similar) {
                    bool placed = false;
                    for (auto& part : parts) {
                        auto same = sameBytes(part.front()->tensor, c->tensor);
                        if (!same)
                            return same.error();
                        if (*same) {
                            part.push_back(c);
                            placed = true;
                            break;
                        }
                    }
                    if (!placed)
                        parts.push_back({c});
                }
            } else {
                std::map<std::string, std::vector<const Copy*>> byHash;
                for (const Copy* c : similar) {
                    auto bytes = read(c->tensor);
                    if (!bytes)
                        return bytes.error();
                    auto digest = hash(c->tensor, *bytes);
                    if (!digest)
                        return digest.error();
                    bytes->releasePages();
                    byHash[*digest].push_back(c);
                }
                for (auto& [digest, equal] : byHash) {
                    // Confirmed byte for byte against the first: a SHA-1 collision is not shared.
                    std::vector<const Copy*> part{equal.front()};
                    for (size_t i = 1; i < equal.size(); ++i) {
                        auto same = sameBytes(equal.front()->tensor, equal[i]->tensor);
                        if (!same)
                            return same.error();
                        if (*same)
                            part.push_back(equal[i]);
                    }
                    parts.push_back(std::move(part));
                }
            }
            for (const auto& part : parts)
                addGroup(part, out);
        }
        return {};
    }

    Progress m_progress;

private:
    // Copies compared directly when this many or fewer share a sample; more are hashed first.
    static constexpr size_t kCompareDirectly = 8;

    // Whether two tensors hold the same bytes, compared in chunks (progress, cancel); their
    // pages are given back after.
    Result<bool> sameBytes(TensorRef a, TensorRef b)
    {
        auto first = read(a);
        if (!first)
            return first.error();
        auto second = read(b);
        if (!second)
            return second.error();
        const auto x = first->bytes();
        const auto y = second->bytes();
        bool same = x.size() == y.size();
        for (size_t done = 0; same && done < x.size();) {
            const size_t piece = std::min(kHashChunk, x.size() - done);
            if (Status s = readMapped(first->where(info(a)) + " or " + second->where(info(b)),
                    [&] { same = std::memcmp(x.data() + done, y.data() + done, piece) == 0; });
                !s)
                return s.error();
            first->releasePages(done, piece);
            second->releasePages(done, piece);
            done += piece;
            m_progress.bytesDone += piece;
            m_progress.tensor = info(b).name;
            if (m_progressCallback)
                m_progressCallback(m_progress);
            if (Status s = cancelled(); !s)
                return s.error();
        }
        return same;
    }

    // Copies of equal bytes: one group with every tensor stored at them, when two or more.
    static void addGroup(const std::vector<const Copy*>& equal, std::vector<IdenticalAcross>& out)
    {
        IdenticalAcross g;
        for (const Copy* c : equal) {
            g.tensors.insert(g.tensors.end(), c->sharing.begin(), c->sharing.end());
            ++g.copies;
        }
        if (g.tensors.size() >= 2) {
            std::sort(g.tensors.begin(), g.tensors.end());
            out.push_back(std::move(g));
        }
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
        // A file is known by its device and inode; one that is not on disk (a remote model's,
        // whose identity has none) by its name.
        std::map<std::tuple<FileId, std::string, uint64_t>, size_t> atRange;
        for (TensorRef ref : members) {
            const TensorInfo& t = finder.info(ref);
            if (!t.isExternal() || !t.external->file()) {
                copies.push_back({ref, {ref}});
                continue;
            }
            const DataFile& file = *t.external->file();
            const bool onDisk = file.source().isLocal();
            auto [it, fresh] = atRange.emplace(
                std::tuple(file.identity().id, onDisk ? std::string() : file.path().string(),
                    t.external->offset),
                copies.size());
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
