// BlockCache (issue 38): remote bytes read in aligned blocks, each fetched once while the budget
// holds it; neighbouring missing blocks in one request; large reads straight from the source;
// lent bytes valid after their block is let go; a failed or cancelled fetch keeps nothing.
#include "core/io/block_cache.h"
#include "core/model/model.h"
#include "core/progress.h"

#include <QTest>

#include <mutex>
#include <random>
#include <thread>

using namespace repack;

namespace {

constexpr uint64_t kBlock = BlockCache::kBlockBytes;

// A source of `size` pseudo-random bytes that records each range asked of it.
struct FakeSource {
    explicit FakeSource(uint64_t size)
        : bytes(size)
    {
        std::mt19937 random(7);
        for (auto& b : bytes)
            b = std::byte(random() & 0xff);
    }
    RangeFetch fetch()
    {
        return [this](uint64_t offset, std::span<std::byte> into) -> Status {
            std::lock_guard lock(mutex);
            requests.emplace_back(offset, into.size());
            if (failing)
                return Error::io("connection reset");
            if (offset + into.size() > bytes.size())
                return Error::internal("the cache asked past the end");
            std::copy_n(bytes.begin() + offset, into.size(), into.begin());
            return {};
        };
    }
    std::vector<std::byte> expected(uint64_t offset, uint64_t length) const
    {
        return {bytes.begin() + offset, bytes.begin() + offset + length};
    }
    std::vector<std::byte> bytes;
    std::mutex mutex;
    std::vector<std::pair<uint64_t, uint64_t>> requests;
    bool failing = false;
};

std::vector<std::byte> toVector(const TensorBytes& t)
{
    return {t.bytes().begin(), t.bytes().end()};
}

using Requests = std::vector<std::pair<uint64_t, uint64_t>>;

} // namespace

class TestBlockCache : public QObject {
    Q_OBJECT
private slots:
    void aReadFetchesItsAlignedBlockOnce();
    void neighbouringMissingBlocksAreOneRequest();
    void oneCachedBlockBetweenIsFetchedAgainNotTwoRequests();
    void theLastBlockIsShort();
    void pastTheEndIsRefused();
    void largeReadsGoStraightToTheSource();
    void readIntoFetchesALargeRangeIntoTheCallersBuffer();
    void readIntoCopiesASmallRangeFromItsBlocks();
    void theBudgetKeepsTheMostRecentlyUsed();
    void lentBytesOutliveTheirBlock();
    void aFailedFetchKeepsNothing();
    void cancelledBeforeAnyRequest();
    void sourcesDoNotShareBlocks();
    void readersOnManyThreadsSeeTheSourceBytes();
};

void TestBlockCache::aReadFetchesItsAlignedBlockOnce()
{
    FakeSource source(3 * kBlock);
    BlockCache cache;
    auto first = cache.read(1, source.bytes.size(), kBlock + 10, 100, source.fetch());
    QVERIFY(first);
    QCOMPARE(toVector(*first), source.expected(kBlock + 10, 100));
    QVERIFY(first->isLent()); // within one block: the block itself
    auto again = cache.read(1, source.bytes.size(), kBlock + 500, 1000, source.fetch());
    QVERIFY(again);
    QCOMPARE(toVector(*again), source.expected(kBlock + 500, 1000));
    QCOMPARE(source.requests, (Requests{{kBlock, kBlock}}));
    QCOMPARE(cache.stats().cachedBytes, kBlock);
}

void TestBlockCache::neighbouringMissingBlocksAreOneRequest()
{
    FakeSource source(8 * kBlock);
    BlockCache cache;
    // Across blocks 1, 2 and 3.
    auto bytes = cache.read(1, source.bytes.size(), kBlock + 5, 2 * kBlock, source.fetch());
    QVERIFY(bytes);
    QCOMPARE(toVector(*bytes), source.expected(kBlock + 5, 2 * kBlock));
    QCOMPARE(source.requests, (Requests{{kBlock, 3 * kBlock}}));
}

void TestBlockCache::oneCachedBlockBetweenIsFetchedAgainNotTwoRequests()
{
    FakeSource source(10 * kBlock);
    BlockCache cache;
    QVERIFY(cache.read(1, source.bytes.size(), 2 * kBlock, 1, source.fetch()));
    QVERIFY(cache.read(1, source.bytes.size(), 5 * kBlock, 1, source.fetch()));
    source.requests.clear();
    // Blocks 1..3: 2 is cached, 1 and 3 are not: one request for all three.
    QVERIFY(cache.read(1, source.bytes.size(), kBlock, 3 * kBlock, source.fetch()));
    QCOMPARE(source.requests, (Requests{{kBlock, 3 * kBlock}}));
    source.requests.clear();
    // Blocks 4..7 with 5 cached: 4 and 6..7 are one request.
    QVERIFY(cache.read(1, source.bytes.size(), 4 * kBlock, 4 * kBlock, source.fetch()));
    QCOMPARE(source.requests, (Requests{{4 * kBlock, 4 * kBlock}}));
    // Blocks 6..9 with 6 and 7 cached: the request asks for 8 and 9 only.
    source.requests.clear();
    auto tail = cache.read(1, source.bytes.size(), 6 * kBlock, 4 * kBlock, source.fetch());
    QVERIFY(tail);
    QCOMPARE(toVector(*tail), source.expected(6 * kBlock, 4 * kBlock));
    QCOMPARE(source.requests, (Requests{{8 * kBlock, 2 * kBlock}}));

    // Two cached blocks between two missing ones: two requests.
    BlockCache other;
    QVERIFY(other.read(1, source.bytes.size(), kBlock, 2 * kBlock, source.fetch()));
    source.requests.clear();
    QVERIFY(other.read(1, source.bytes.size(), 0, 4 * kBlock, source.fetch()));
    QCOMPARE(source.requests, (Requests{{0, kBlock}, {3 * kBlock, kBlock}}));
}

void TestBlockCache::theLastBlockIsShort()
{
    const uint64_t size = 2 * kBlock + 777;
    FakeSource source(size);
    BlockCache cache;
    auto tail = cache.read(1, size, size - 10, 10, source.fetch());
    QVERIFY(tail);
    QCOMPARE(toVector(*tail), source.expected(size - 10, 10));
    QCOMPARE(source.requests, (Requests{{2 * kBlock, 777}}));
    QCOMPARE(cache.stats().cachedBytes, uint64_t(777));
}

void TestBlockCache::pastTheEndIsRefused()
{
    FakeSource source(kBlock);
    BlockCache cache;
    auto past = cache.read(1, kBlock, kBlock - 4, 8, source.fetch());
    QVERIFY(!past);
    QVERIFY(past.error().is(ErrorKind::Corrupt));
    QVERIFY2(past.error().message.find("past the end") != std::string::npos,
        past.error().message.c_str());
    auto huge = cache.read(1, kBlock, 8, UINT64_MAX, source.fetch());
    QVERIFY(!huge); // offset + length overflows: refused, not wrapped
    QVERIFY(source.requests.empty());
}

void TestBlockCache::largeReadsGoStraightToTheSource()
{
    FakeSource source(12 * kBlock);
    BlockCache cache;
    const uint64_t length = (BlockCache::kMaxCachedBlocks + 1) * kBlock;
    auto bytes = cache.read(1, source.bytes.size(), 100, length, source.fetch());
    QVERIFY(bytes);
    QCOMPARE(toVector(*bytes), source.expected(100, length));
    QCOMPARE(source.requests, (Requests{{100, length}})); // exactly the range, once
    QCOMPARE(cache.stats().cachedBytes, uint64_t(0));
}

void TestBlockCache::readIntoFetchesALargeRangeIntoTheCallersBuffer()
{
    FakeSource source(12 * kBlock);
    BlockCache cache;
    const uint64_t length = (BlockCache::kMaxCachedBlocks + 1) * kBlock;
    std::vector<std::byte> into(length);
    const std::byte* target = nullptr; // where the source was asked to write
    const RangeFetch fetch = source.fetch();
    QVERIFY(cache.readInto(
        1, source.bytes.size(), 100, into, [&](uint64_t offset, std::span<std::byte> to) {
            target = to.data();
            return fetch(offset, to);
        }));
    QCOMPARE(into, source.expected(100, length));
    QCOMPARE(source.requests, (Requests{{100, length}}));
    QCOMPARE(target, into.data()); // no buffer of the cache's in between
    QCOMPARE(cache.stats().cachedBytes, uint64_t(0));
    QCOMPARE(cache.stats().fetchedBytes, length);
    // Past the end: refused, nothing asked.
    source.requests.clear();
    QVERIFY(!cache.readInto(1, source.bytes.size(), 8 * kBlock, into, source.fetch()));
    QVERIFY(source.requests.empty());
}

void TestBlockCache::readIntoCopiesASmallRangeFromItsBlocks()
{
    FakeSource source(4 * kBlock);
    BlockCache cache;
    std::vector<std::byte> into(kBlock);
    QVERIFY(cache.readInto(1, source.bytes.size(), kBlock / 2, into, source.fetch()));
    QCOMPARE(into, source.expected(kBlock / 2, kBlock));
    QCOMPARE(source.requests, (Requests{{0, 2 * kBlock}})); // its two blocks, kept
    source.requests.clear();
    std::fill(into.begin(), into.end(), std::byte{0});
    QVERIFY(cache.readInto(1, source.bytes.size(), kBlock / 2, into, source.fetch()));
    QCOMPARE(into, source.expected(kBlock / 2, kBlock));
    QVERIFY(source.requests.empty()); // from the cache
}

void TestBlockCache::theBudgetKeepsTheMostRecentlyUsed()
{
    FakeSource source(8 * kBlock);
    BlockCache cache(2 * kBlock);
    QVERIFY(cache.read(1, source.bytes.size(), 0, 1, source.fetch()));
    QVERIFY(cache.read(1, source.bytes.size(), 2 * kBlock, 1, source.fetch()));
    QVERIFY(cache.read(1, source.bytes.size(), 0, 1, source.fetch())); // 0 used again
    QVERIFY(cache.read(1, source.bytes.size(), 4 * kBlock, 1, source.fetch())); // pushes 2 out
    QCOMPARE(cache.stats().cachedBytes, 2 * kBlock);
    source.requests.clear();
    QVERIFY(cache.read(1, source.bytes.size(), 0, 1, source.fetch()));
    QVERIFY(source.requests.empty());
    auto again = cache.read(1, source.bytes.size(), 2 * kBlock + 3, 5, source.fetch());
    QVERIFY(again);
    QCOMPARE(toVector(*again), source.expected(2 * kBlock + 3, 5));
    QCOMPARE(source.requests, (Requests{{2 * kBlock, kBlock}}));
}

void TestBlockCache::lentBytesOutliveTheirBlock()
{
    FakeSource source(4 * kBlock);
    BlockCache cache(kBlock);
    auto held = cache.read(1, source.bytes.size(), 10, 20, source.fetch());
    QVERIFY(held && held->isLent());
    QVERIFY(cache.read(1, source.bytes.size(), 3 * kBlock, 1, source.fetch())); // pushes 0 out
    cache.forget(1);
    QCOMPARE(cache.stats().cachedBytes, uint64_t(0));
    QCOMPARE(toVector(*held), source.expected(10, 20));
}

void TestBlockCache::aFailedFetchKeepsNothing()
{
    FakeSource source(4 * kBlock);
    BlockCache cache;
    source.failing = true;
    auto failed = cache.read(1, source.bytes.size(), 0, 10, source.fetch());
    QVERIFY(!failed);
    QCOMPARE(failed.error().message, std::string("connection reset"));
    QCOMPARE(cache.stats().cachedBytes, uint64_t(0));
    source.failing = false;
    auto later = cache.read(1, source.bytes.size(), 0, 10, source.fetch());
    QVERIFY(later);
    QCOMPARE(toVector(*later), source.expected(0, 10));
    QCOMPARE(source.requests.size(), size_t(2));
}

void TestBlockCache::cancelledBeforeAnyRequest()
{
    FakeSource source(8 * kBlock);
    BlockCache cache;
    CancelToken cancel;
    cancel.cancel();
    auto small = cache.read(1, source.bytes.size(), 0, 10, source.fetch(), &cancel);
    QVERIFY(!small);
    QVERIFY(small.error().is(ErrorKind::Cancelled));
    auto large = cache.read(1, source.bytes.size(), 0, 6 * kBlock, source.fetch(), &cancel);
    QVERIFY(!large);
    QVERIFY(large.error().is(ErrorKind::Cancelled));
    QVERIFY(source.requests.empty());
}

void TestBlockCache::sourcesDoNotShareBlocks()
{
    FakeSource one(kBlock);
    FakeSource other(kBlock);
    other.bytes[5] = ~one.bytes[5];
    BlockCache cache;
    const uint64_t a = BlockCache::newSourceKey();
    const uint64_t b = BlockCache::newSourceKey();
    QVERIFY(a != b);
    auto fromA = cache.read(a, kBlock, 5, 1, one.fetch());
    auto fromB = cache.read(b, kBlock, 5, 1, other.fetch());
    QVERIFY(fromA && fromB);
    QCOMPARE(toVector(*fromA), one.expected(5, 1));
    QCOMPARE(toVector(*fromB), other.expected(5, 1));
    cache.forget(a);
    QCOMPARE(cache.stats().cachedBytes, kBlock); // b's block stays
}

void TestBlockCache::readersOnManyThreadsSeeTheSourceBytes()
{
    FakeSource source(64 * kBlock + 123);
    BlockCache cache(8 * kBlock); // smaller than the source: blocks come and go while read
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            std::mt19937_64 random(t);
            for (int i = 0; i < 300; ++i) {
                const uint64_t offset = random() % source.bytes.size();
                const uint64_t length
                    = std::min<uint64_t>(random() % (3 * kBlock), source.bytes.size() - offset);
                auto bytes = cache.read(1, source.bytes.size(), offset, length, source.fetch());
                if (!bytes || toVector(*bytes) != source.expected(offset, length))
                    ++wrong;
            }
        });
    }
    for (auto& thread : threads)
        thread.join();
    QCOMPARE(wrong.load(), 0);
    QVERIFY(cache.stats().cachedBytes <= 8 * kBlock);
}

QTEST_APPLESS_MAIN(TestBlockCache)
#include "tst_block_cache.moc"
