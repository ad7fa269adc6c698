// The memory of remote bytes: a file on a web server, the Hub or S3 is read in
// aligned blocks, each fetched once by a range request and kept while the budget allows, so a
// walk over a model's wire structure asks the server for a few blocks, not for the weights.
//
// Blocks are shared by every reader of a source and lent out: bytes a caller holds stay valid
// after the cache lets their block go. Missing blocks next to each other are fetched by one
// request, and so are two runs of them with one cached block between (one request costs more
// than a block's bytes). A read larger than a few blocks goes straight to the source and is not
// kept: weights are read once, and would only push out the blocks of the model's structure.
#pragma once

#include "core/result.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace repack {

class CancelToken;
class TensorBytes;

// Fills `into` with the source's bytes from `offset` on, all of them or an error (one range
// request). Called without the cache's lock held, possibly from several threads at once.
using RangeFetch = std::function<Status(uint64_t offset, std::span<std::byte> into)>;

class BlockCache {
public:
    static constexpr uint64_t kBlockBytes = 256 << 10;
    // Reads of more blocks than this go straight to the source.
    static constexpr uint64_t kMaxCachedBlocks = 4;

    // `budgetBytes`: the most the cached blocks take together (at least one block's worth).
    explicit BlockCache(uint64_t budgetBytes = 64 << 20);
    BlockCache(const BlockCache&) = delete;
    BlockCache& operator=(const BlockCache&) = delete;

    // The cache every remote source of the process shares.
    static BlockCache& shared();
    // A key for a source opened now: blocks are never shared between keys, so a source whose
    // bytes changed is opened again under a new key and is never served the old ones.
    static uint64_t newSourceKey();

    // [offset, offset + length) of the source `key` of `sourceBytes` bytes: a lent block when the
    // range lies in one, else bytes of its own. Out of range or a failed fetch: an error, and
    // nothing of that fetch is kept. `cancel` is asked before each fetch.
    Result<TensorBytes> read(uint64_t key, uint64_t sourceBytes, uint64_t offset, uint64_t length,
        const RangeFetch& fetch, const CancelToken* cancel = nullptr);
    // The same range copied into `into`; a range read() would fetch straight from the source is
    // fetched into `into` itself (one request, no memory of the cache's).
    Status readInto(uint64_t key, uint64_t sourceBytes, uint64_t offset, std::span<std::byte> into,
        const RangeFetch& fetch, const CancelToken* cancel = nullptr);
    // Keeps `bytes`, fetched by other means (the GET that opened the source), as block `index`
    // of the source `key` of `sourceBytes` bytes: ignored unless they are that whole block.
    void keep(uint64_t key, uint64_t sourceBytes, uint64_t index, std::vector<std::byte> bytes);
    // Lets go of the blocks of `key` (a source closed, or found changed).
    void forget(uint64_t key);

    struct Stats {
        uint64_t requests = 0; // fetches made, direct reads included
        uint64_t fetchedBytes = 0;
        uint64_t cachedBytes = 0; // held by the cache now
    };
    Stats stats() const;

private:
    using Block = std::vector<std::byte>;
    // Whether [offset, offset + length) (not empty) is fetched straight from the source.
    bool goesStraight(uint64_t offset, uint64_t length) const;
    // Fetches [offset, offset + into.size()) straight into `into`, counted in the stats.
    Status fetchStraight(uint64_t offset, std::span<std::byte> into, const RangeFetch& fetch,
        const CancelToken* cancel);
    struct BlockId {
        uint64_t key = 0;
        uint64_t index = 0;
        auto operator<=>(const BlockId&) const = default;
    };
    struct Entry {
        std::shared_ptr<const Block> block;
        std::list<BlockId>::iterator lru;
    };
    // [first, last] block indices, inclusive.
    struct Run {
        uint64_t first = 0;
        uint64_t last = 0;
    };

    // Fetches the blocks [first, last] of `key` not yet cached, as few requests as missingRuns
    // makes of them, no more than the budget holds.
    Status fetchMissing(uint64_t key, uint64_t sourceBytes, uint64_t first, uint64_t last,
        const RangeFetch& fetch, const CancelToken* cancel);
    std::vector<Run> missingRuns(uint64_t key, const std::vector<uint64_t>& blocks) const;
    Status fetchRuns(uint64_t key, uint64_t sourceBytes, const std::vector<Run>& runs,
        const RangeFetch& fetch, const CancelToken* cancel);
    std::shared_ptr<const Block> lookup(uint64_t key, uint64_t index);
    void insert(uint64_t key, uint64_t index, std::shared_ptr<const Block> block);
    void evictOverBudget();

    const uint64_t m_budget;
    mutable std::mutex m_mutex;
    std::map<BlockId, Entry> m_blocks;
    std::list<BlockId> m_lru; // most recently used first
    Stats m_stats;
};

} // namespace repack
