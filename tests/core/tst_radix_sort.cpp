// radixSortBy is std::stable_sort by an unsigned key: the index's sorts of name hashes rely on
// equal keys keeping their order (the first tensor of a name is the one a lookup finds, and a
// duplicate is reported at the first of its group).
#include "core/radix_sort.h"

#include <QTest>

#include <algorithm>
#include <random>

using namespace repack;

namespace {

struct Item {
    uint64_t key = 0;
    uint32_t order = 0;
    bool operator==(const Item&) const = default;
};

// `count` items whose keys take `distinct` values, each value spread over the key's bytes by
// `spread` (so that some passes see one value of their byte and are skipped).
std::vector<Item> items(size_t count, uint64_t distinct, uint64_t spread, uint32_t seed)
{
    std::mt19937_64 random(seed);
    std::vector<Item> out(count);
    for (uint32_t i = 0; i < count; ++i)
        out[i] = {(random() % distinct) * spread, i};
    return out;
}

} // namespace

class TestRadixSort : public QObject {
    Q_OBJECT
private slots:
    void sortsAsStableSortDoes_data();
    void sortsAsStableSortDoes();
    void narrowKeys();
};

void TestRadixSort::sortsAsStableSortDoes_data()
{
    QTest::addColumn<qulonglong>("count");
    QTest::addColumn<qulonglong>("distinct");
    QTest::addColumn<qulonglong>("spread");
    QTest::addRow("empty") << 0ull << 1ull << 1ull;
    QTest::addRow("one") << 1ull << 1ull << 1ull;
    QTest::addRow("all equal") << 1000ull << 1ull << 1ull;
    QTest::addRow("low byte only") << 5000ull << 256ull << 1ull;
    QTest::addRow("a middle byte only") << 5000ull << 200ull << qulonglong(1ull << 40);
    QTest::addRow("many ties") << 20000ull << 50ull << 0x0101010101010101ull;
    QTest::addRow("full 64-bit keys") << 20000ull << qulonglong(UINT64_MAX) << 1ull;
}

void TestRadixSort::sortsAsStableSortDoes()
{
    QFETCH(qulonglong, count);
    QFETCH(qulonglong, distinct);
    QFETCH(qulonglong, spread);
    auto sorted = items(count, distinct, spread, 7);
    auto expected = sorted;
    std::stable_sort(expected.begin(), expected.end(),
        [](const Item& a, const Item& b) { return a.key < b.key; });
    radixSortBy(sorted, [](const Item& item) { return item.key; });
    QVERIFY(sorted == expected);
}

void TestRadixSort::narrowKeys()
{
    std::vector<uint32_t> values{0xffffffff, 3, 0x10000, 3, 0, 0x1000000};
    radixSortBy(values, [](uint32_t v) { return v; });
    QCOMPARE(values, (std::vector<uint32_t>{0, 3, 3, 0x10000, 0x1000000, 0xffffffff}));
}

QTEST_GUILESS_MAIN(TestRadixSort)
#include "tst_radix_sort.moc"
