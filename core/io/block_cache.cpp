#include "block_cache.h"

#include "core/progress.h"
#include "tensor_bytes.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace repack {

namespace {

std::string rangeText(uint64_t offset, uint64_t length)
{
    return "bytes " + std::to_string(offset) + "-" + std::to_string(offset + length);
}

// Ok when [offset, offset + length) lies within a source of `sourceBytes` bytes.
Status inRange(uint64_t sourceBytes, uint64_t offset, uint64_t length)
{
    if (offset > sourceBytes || length > sourceBytes - offset)
        return Error::corrupt(rangeText(offset, length) + " lie past the end (the file has "
            + std::to_string(sourceBytes) + " bytes)");
    return {};
}

} // namespace

BlockCache::BlockCache(uint64_t budgetBytes)
    : m_budget(std::max(budgetBytes, kBlockBytes))
{
}

BlockCache& BlockCache::shared()
{
    static BlockCache cache;
    return cache;
}

uint64_t BlockCache::newSourceKey()
{
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

bool BlockCache::goesStraight(uint64_t offset, uint64_t length) const
{
    const uint64_t first = offset / kBlockBytes;
    const uint64_t last = (offset + length - 1) / kBlockBytes;
    return last - first + 1 > kMaxCachedBlocks || length > m_budget / 4;
}

Status BlockCache::fetchStraight(
    uint64_t offset, std::span<std::byte> into, const RangeFetch& fetch, const CancelToken* cancel)
{
    if (cancel && cancel->isCancelled())
        return cancelled("reading " + rangeText(offset, into.size()));
    {
        std::lock_guard lock(m_mutex);
        ++m_stats.requests;
        m_stats.fetchedBytes += into.size();
    }
    return fetch(offset, into);
}

Status BlockCache::readInto(uint64_t key, uint64_t sourceBytes, uint64_t offset,
    std::span<std::byte> into, const RangeFetch& fetch, const CancelToken* cancel)
{
    if (Status s = inRange(sourceBytes, offset, into.size()); !s)
        return s;
    if (!into.empty() && goesStraight(offset, into.size()))
        return fetchStraight(offset, into, fetch, cancel);
    auto bytes = read(key, sourceBytes, offset, into.size(), fetch, cancel);
    if (!bytes)
        return bytes.error();
    return bytes->copyTo(into, rangeText(offset, into.size()));
}

Result<TensorBytes> BlockCache::read(uint64_t key, uint64_t sourceBytes, uint64_t offset,
    uint64_t length, const RangeFetch& fetch, const CancelToken* cancel)
{
    if (Status s = inRange(sourceBytes, offset, length); !s)
        return s.error();
    if (length == 0)
        return TensorBytes::own({});
    const uint64_t first = offset / kBlockBytes;
    const uint64_t last = (offset + length - 1) / kBlockBytes;
    if (goesStraight(offset, length)) {
        // Weights: read once, straight into memory of their own.
        std::vector<std::byte> bytes(length);
        if (Status s = fetchStraight(offset, bytes, fetch, cancel); !s)
            return s.error();
        return TensorBytes::own(std::move(bytes));
    }
    if (Status s = fetchMissing(key, sourceBytes, first, last, fetch, cancel); !s)
        return s.error();
    // The blocks were fetched or found above, but other readers may have pushed them out since
    // (rare: the budget holds many reads' blocks): what is missing now is fetched again for this
    // read alone, into memory of its own, which no other reader can push out before it is read.
    std::vector<std::shared_ptr<const Block>> blocks;
    for (uint64_t index = first; index <= last; ++index) {
        auto block = lookup(key, index);
        if (!block) {
            const uint64_t begin = index * kBlockBytes;
            auto own = std::make_shared<Block>(std::min(kBlockBytes, sourceBytes - begin));
            if (Status s = fetchStraight(begin, *own, fetch, cancel); !s)
                return s.error();
            block = std::move(own);
        }
        blocks.push_back(std::move(block));
    }
    const uint64_t skip = offset - first * kBlockBytes;
    if (blocks.size() == 1) {
        const Block& only = *blocks.front();
        return TensorBytes::lent(
            std::span<const std::byte>(only).subspan(skip, length), blocks.front());
    }
    std::vector<std::byte> bytes(length);
    uint64_t done = 0;
    for (size_t i = 0; i < blocks.size(); ++i) {
        const Block& block = *blocks[i];
        const uint64_t from = i == 0 ? skip : 0;
        const uint64_t n = std::min<uint64_t>(block.size() - from, length - done);
        std::memcpy(bytes.data() + done, block.data() + from, n);
        done += n;
    }
    return TensorBytes::own(std::move(bytes));
}

Status BlockCache::fetchMissing(uint64_t key, uint64_t sourceBytes, uint64_t first, uint64_t last,
    const RangeFetch& fetch, const CancelToken* cancel)
{
    std::vector<uint64_t> wanted;
    // More than the budget would push out what it fetched first: keep to what fits.
    for (uint64_t index = first; index <= last && wanted.size() < m_budget / kBlockBytes; ++index)
        wanted.push_back(index);
    return fetchRuns(key, sourceBytes, missingRuns(key, wanted), fetch, cancel);
}

std::vector<BlockCache::Run> BlockCache::missingRuns(
    uint64_t key, const std::vector<uint64_t>& blocks) const
{
    std::vector<Run> runs;
    std::lock_guard lock(m_mutex);
    for (uint64_t index : blocks) {
        if (m_blocks.contains({key, index}))
            continue;
        // Joined to the run before when at most one block lies between (fetched again: one
        // request costs more than a block). Each run is fetched into one buffer, then cut into
        // blocks: a read's run is kMaxCachedBlocks at most.
        if (!runs.empty() && index <= runs.back().last + 2)
            runs.back().last = index;
        else
            runs.push_back({index, index});
    }
    return runs;
}

Status BlockCache::fetchRuns(uint64_t key, uint64_t sourceBytes, const std::vector<Run>& runs,
    const RangeFetch& fetch, const CancelToken* cancel)
{
    for (const Run& run : runs) {
        const uint64_t offset = run.first * kBlockBytes;
        const uint64_t end = std::min(sourceBytes, (run.last + 1) * kBlockBytes);
        if (cancel && cancel->isCancelled())
            return cancelled("reading " + rangeText(offset, end - offset));
        std::vector<std::byte> bytes(end - offset);
        {
            std::lock_guard lock(m_mutex);
            ++m_stats.requests;
            m_stats.fetchedBytes += bytes.size();
        }
        if (Status s = fetch(offset, bytes); !s)
            return s;
        for (uint64_t index = run.first; index <= run.last; ++index) {
            const uint64_t from = index * kBlockBytes - offset;
            const uint64_t to = std::min<uint64_t>(bytes.size(), from + kBlockBytes);
            insert(key, index,
                std::make_shared<const Block>(bytes.begin() + from, bytes.begin() + to));
        }
    }
    return {};
}

std::shared_ptr<const BlockCache::Block> BlockCache::lookup(uint64_t key, uint64_t index)
{
    std::lock_guard lock(m_mutex);
    auto it = m_blocks.find({key, index});
    if (it == m_blocks.end())
        return nullptr;
    m_lru.splice(m_lru.begin(), m_lru, it->second.lru);
    return it->second.block;
}

void BlockCache::keep(
    uint64_t key, uint64_t sourceBytes, uint64_t index, std::vector<std::byte> bytes)
{
    if (index >= (sourceBytes + kBlockBytes - 1) / kBlockBytes
        || bytes.size() != std::min(kBlockBytes, sourceBytes - index * kBlockBytes))
        return;
    {
        std::lock_guard lock(m_mutex);
        ++m_stats.requests;
        m_stats.fetchedBytes += bytes.size();
    }
    insert(key, index, std::make_shared<const Block>(std::move(bytes)));
}

void BlockCache::insert(uint64_t key, uint64_t index, std::shared_ptr<const Block> block)
{
    std::lock_guard lock(m_mutex);
    const BlockId id{key, index};
    auto it = m_blocks.find(id);
    if (it != m_blocks.end()) { // fetched by another reader meanwhile: the same bytes
        m_lru.splice(m_lru.begin(), m_lru, it->second.lru);
        return;
    }
    m_stats.cachedBytes += block->size();
    m_lru.push_front(id);
    m_blocks.emplace(id, Entry{std::move(block), m_lru.begin()});
    evictOverBudget();
}

void BlockCache::evictOverBudget()
{
    while (m_stats.cachedBytes > m_budget && !m_lru.empty()) {
        auto it = m_blocks.find(m_lru.back());
        m_stats.cachedBytes -= it->second.block->size();
        m_blocks.erase(it);
        m_lru.pop_back();
    }
}

void BlockCache::forget(uint64_t key)
{
    std::lock_guard lock(m_mutex);
    auto it = m_blocks.lower_bound({key, 0});
    while (it != m_blocks.end() && it->first.key == key) {
        m_stats.cachedBytes -= it->second.block->size();
        m_lru.erase(it->second.lru);
        it = m_blocks.erase(it);
    }
}

BlockCache::Stats BlockCache::stats() const
{
    std::lock_guard lock(m_mutex);
    return m_stats;
}

} // namespace repack
