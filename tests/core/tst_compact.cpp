// The index's compact field types (core/model/compact.h): they read like the std types they
// replace, copy deeply, and stay valid when an allocation fails (the index is built under
// guardMemory, whose unwinding destroys every entry built so far).
#include "core/model/compact.h"

#include <QTest>

#include <cstdlib>
#include <new>
#include <string>

namespace {
int g_failAfter = -1; // allocations left before one throws; -1: never
}

void* operator new(std::size_t size)
{
    if (g_failAfter == 0) {
        g_failAfter = -1;
        throw std::bad_alloc();
    }
    if (g_failAfter > 0)
        --g_failAfter;
    if (void* p = std::malloc(size ? size : 1))
        return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t size)
{
    return operator new(size);
}
void operator delete(void* p) noexcept
{
    std::free(p);
}
void operator delete[](void* p) noexcept
{
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept
{
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept
{
    std::free(p);
}

using namespace repack;

class TestCompact : public QObject {
    Q_OBJECT

private slots:
    void dimsReadLikeAVector();
    void dimsStayValidWhenAnAllocationFails();
    void rareCopiesDeeplyAndReadsADefault();
    void compactIsAnOptional();
};

void TestCompact::dimsReadLikeAVector()
{
    for (const std::vector<int64_t>& v : {std::vector<int64_t>{}, {7}, {3, 4}, {1, 2, 3, 4, 5}}) {
        Dims d(v);
        QCOMPARE(d.toVector(), v);
        Dims copy = d;
        Dims moved = std::move(d);
        QCOMPARE(copy.toVector(), v);
        QCOMPARE(moved.toVector(), v);
        QVERIFY(copy == v);
        copy = Dims{9, 9, 9, 9};
        QCOMPARE(copy.size(), size_t(4));
        copy = moved;
        QVERIFY(copy == moved);
    }
    QVERIFY((Dims{1, 2} < Dims{1, 3}));
    QVERIFY((Dims{1, 2, 3} > Dims{1, 2}));
}

void TestCompact::dimsStayValidWhenAnAllocationFails()
{
    Dims d{1, 2, 3, 4}; // on the heap
    const Dims big{5, 6, 7, 8, 9};
    g_failAfter = 0;
    bool threw = false;
    try {
        d = big; // frees its block, then the new one fails
    } catch (const std::bad_alloc&) {
        threw = true;
    }
    QVERIFY(threw);
    QVERIFY(d.empty()); // and its destructor frees nothing it does not own
    d = big;
    QCOMPARE(d.toVector(), big.toVector());
}

void TestCompact::rareCopiesDeeplyAndReadsADefault()
{
    Rare<std::string> a;
    QVERIFY(!a.present());
    const Rare<std::string>& constA = a;
    QCOMPARE(*constA, std::string()); // reading allocates nothing
    QVERIFY(!a.present());
    a = std::string("reason");
    Rare<std::string> b = a;
    *b = "other";
    QCOMPARE(*a, std::string("reason"));
    QCOMPARE(*b, std::string("other"));
    a.reset();
    QVERIFY(!a.present());
}

void TestCompact::compactIsAnOptional()
{
    using Count = Compact<uint64_t, UINT64_MAX>;
    Count c;
    QVERIFY(!c.has_value());
    QCOMPARE(c.value_or(5), uint64_t(5));
    c = uint64_t(0);
    QVERIFY(c.has_value());
    QCOMPARE(*c, uint64_t(0));
    const std::optional<uint64_t> back = c;
    QCOMPARE(back, std::optional<uint64_t>(0));
    c = std::optional<uint64_t>();
    QVERIFY(!c);
    QVERIFY_THROWS_EXCEPTION(std::bad_optional_access, c.value());
}

QTEST_GUILESS_MAIN(TestCompact)
#include "tst_compact.moc"
