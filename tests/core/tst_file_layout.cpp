// File layout accounting: referenced, padding, orphaned and overlapping bytes of hand-built
// data files. Each row says where tensors were placed and what filled the rest, so the
// expected numbers follow from the construction.
#include "core/model/model.h"
#include "core/plan/file_layout.h"
#include "tests/support/data_file_builder.h"
#include "tests/support/model_builder.h"
#include "tests/support/tensor_builder.h"

#include <QTemporaryDir>
#include <QTest>

using namespace repack;
using namespace fixtures;

struct Span {
    quint64 offset;
    quint64 length;
};
using Placements = std::vector<Span>;
Q_DECLARE_METATYPE(Placements)

class TestFileLayout : public QObject {
    Q_OBJECT
private slots:
    void accounting_data();
    void accounting();
    void referencesPastTheEndClaimOnlyExistingBytes();
};

void TestFileLayout::accounting_data()
{
    QTest::addColumn<Placements>("tensors");
    QTest::addColumn<quint64>("fileSize"); // bytes after the last tensor are junk
    QTest::addColumn<quint64>("referenced");
    QTest::addColumn<quint64>("padding");
    QTest::addColumn<quint64>("orphaned");
    QTest::addColumn<quint64>("overlapping");
    // What the gaps are counted against (SPEC 6): the bytes it asks for before a tensor are
    // padding, every other byte no tensor reads is orphaned.
    QTest::addColumn<quint64>("alignment");
    const quint64 mib = 1ull << 20;

    QTest::newRow("dense") << Placements{{0, 100}, {100, 50}} << 150ull << 150ull << 0ull << 0ull
                           << 0ull << 4096ull;
    // Zeros from 1000 to 4096 and from 6096 to 8192: alignment padding.
    QTest::newRow("aligned to 4096 with zero padding")
        << Placements{{0, 1000}, {4096, 2000}, {8192, 10}} << 8202ull << 3010ull
        << (3096ull + 2096ull) << 0ull << 0ull << 4096ull;
    // A save may align up to 16 MiB (SPEC 5a): the gap before a tensor at 1 MiB is padding.
    QTest::newRow("aligned to 1 MiB")
        << Placements{{0, 1000}, {1ull << 20, 10}} << ((1ull << 20) + 10) << 1010ull
        << ((1ull << 20) - 1000) << 0ull << 0ull << mib;
    // 5001 junk bytes where a removed tensor lived; the next offset (odd) is not aligned.
    QTest::newRow("orphaned gap") << Placements{{0, 100}, {5101, 100}} << 5201ull << 200ull << 0ull
                                  << 5001ull << 0ull << 4096ull;
    QTest::newRow("trailing bytes")
        << Placements{{0, 64}} << 364ull << 64ull << 0ull << 300ull << 0ull << 4096ull;
    QTest::newRow("two overlapping tensors") << Placements{{0, 1000}, {600, 1000}} << 1600ull
                                             << 1600ull << 0ull << 0ull << 400ull << 4096ull;
    QTest::newRow("tensor inside another") << Placements{{0, 1000}, {200, 100}} << 1000ull
                                           << 1000ull << 0ull << 0ull << 100ull << 4096ull;
    // Exactly one range read by two tensors is shared (repack --dedupe), not an overlap.
    QTest::newRow("same range twice")
        << Placements{{0, 256}, {0, 256}} << 256ull << 256ull << 0ull << 0ull << 0ull << 4096ull;
    QTest::newRow("same offset, other length")
        << Placements{{0, 256}, {0, 100}} << 256ull << 256ull << 0ull << 0ull << 100ull << 4096ull;
    // Padding to 4096, a 4096-byte tensor, 777 junk bytes, a tensor at odd 8969 (31 bytes)
    // overlapped by 10 bytes of another, then 5 trailing junk bytes.
    QTest::newRow("all at once") << Placements{{0, 1000}, {4096, 4096}, {8969, 31}, {8979, 10}}
                                 << 9005ull << (1000ull + 4096ull + 31ull) << 3096ull
                                 << (777ull + 5ull) << 10ull << 4096ull;
    // A tensor pinned out of the middle of three 64 KiB ones, the others kept in place: the next
    // offset, 128 KiB, happens to be a multiple of 128 KiB, but no alignment asked for the gap.
    QTest::newRow("pinned out, next offset aligned by chance")
        << Placements{{0, 65536}, {131072, 65536}} << 196608ull << 131072ull << 0ull << 65536ull
        << 0ull << 4096ull;
    QTest::newRow("pinned out, counted against 64 KiB")
        << Placements{{0, 65536}, {131072, 65536}} << 196608ull << 131072ull << 0ull << 65536ull
        << 0ull << 65536ull;
    // The gap's first 3096 bytes are what 4096 asks for; the next 4096 nobody asked for.
    QTest::newRow("gap longer than the alignment asks")
        << Placements{{0, 1000}, {8192, 10}} << 8202ull << 1010ull << 3096ull << 4096ull << 0ull
        << 4096ull;
    // Written with 4096 and counted against 64 KiB: the next offset is a multiple of 4096 only,
    // so the padding is what 4096 asks for.
    QTest::newRow("written with a smaller alignment")
        << Placements{{0, 1000}, {4096, 2000}} << 6096ull << 3000ull << 3096ull << 0ull << 0ull
        << 65536ull;
    QTest::newRow("dense: every gap orphaned") << Placements{{0, 1000}, {4096, 2000}} << 6096ull
                                               << 3000ull << 0ull << 3096ull << 0ull << 0ull;
}

void TestFileLayout::accounting()
{
    QFETCH(Placements, tensors);
    QFETCH(quint64, fileSize);
    QFETCH(quint64, referenced);
    QFETCH(quint64, padding);
    QFETCH(quint64, orphaned);
    QFETCH(quint64, overlapping);
    QFETCH(quint64, alignment);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    DataFileBuilder data("layout.bin");
    data.place(0, std::string(fileSize, '\xEE')); // junk everywhere no tensor or padding sits
    // Zero the alignment gaps in the "aligned" layouts: from each tensor's end up to the
    // next 4096 boundary when a tensor starts there.
    for (const auto& t : tensors)
        for (const auto& next : tensors)
            if (next.offset % 4096 == 0 && next.offset > t.offset + t.length
                && next.offset - (t.offset + t.length) < 4096)
                data.place(
                    t.offset + t.length, std::string(next.offset - (t.offset + t.length), '\0'));

    onnx::ModelProto model = emptyModel();
    for (size_t i = 0; i < tensors.size(); ++i) {
        const Span& p = tensors[i];
        auto t = rawTensor(
            "t" + std::to_string(i), 2, {qint64(p.length)}, patternBytes(p.length, uint8_t(i + 1)));
        data.externalize(t, p.offset);
        *model.mutable_graph()->add_initializer() = t;
    }
    QCOMPARE(data.size(), fileSize);
    QVERIFY(data.save(dir.path()));
    QVERIFY(saveModel(model, dir.filePath("model.onnx")));

    auto loaded = Model::load(dir.filePath("model.onnx").toStdString());
    QVERIFY(loaded.ok());
    QVERIFY((*loaded)->problems().empty());
    const auto layouts = computeLayout(**loaded, alignment);
    QCOMPARE(layouts.size(), size_t(1));
    const FileLayout& f = layouts.front();
    QCOMPARE(f.alignment, alignment);
    QCOMPARE(QString::fromStdString(f.location), QString("layout.bin"));
    QCOMPARE(f.bytes, fileSize);
    QCOMPARE(f.referencedBytes, referenced);
    QCOMPARE(f.paddingBytes, padding);
    QCOMPARE(f.orphanedBytes, orphaned);
    QCOMPARE(f.overlappingBytes, overlapping);

    // The regions agree with the totals.
    quint64 pad = 0, orphan = 0, overlap = 0;
    int tensorRegions = 0;
    for (const Region& r : f.regions) {
        switch (r.type) {
        case RegionType::Tensor:
            ++tensorRegions;
            break;
        case RegionType::Padding:
            pad += r.length;
            break;
        case RegionType::Orphaned:
            orphan += r.length;
            break;
        case RegionType::Overlap:
            overlap += r.length;
            break;
        case RegionType::Header:
            QFAIL("a raw data file has no header");
        }
    }
    QCOMPARE(tensorRegions, int(tensors.size()));
    QCOMPARE(pad, padding);
    QCOMPARE(orphan, orphaned);
    QCOMPARE(overlap, overlapping);
    // Referenced, padding and orphaned bytes partition the file.
    QCOMPARE(referenced + padding + orphaned, fileSize);

    // Counted again from its regions alone, against another alignment and back, the file is
    // told apart as a layout computed against that alignment tells it.
    for (const quint64 other : {quint64(0), quint64(65536), alignment}) {
        const FileLayout again = recountedLayout(f, other);
        const FileLayout fresh = computeLayout(**loaded, other).front();
        QCOMPARE(again.alignment, other);
        QCOMPARE(again.location, fresh.location);
        QCOMPARE(again.paddingBytes, fresh.paddingBytes);
        QCOMPARE(again.orphanedBytes, fresh.orphanedBytes);
        QCOMPARE(again.overlappingBytes, fresh.overlappingBytes);
        QCOMPARE(again.regions.size(), fresh.regions.size());
    }
}

void TestFileLayout::referencesPastTheEndClaimOnlyExistingBytes()
{
    // A model whose data file was truncated after loading still lays out what exists.
    QTemporaryDir dir;
    DataFileBuilder data("layout.bin");
    onnx::ModelProto model = emptyModel();
    auto a = rawTensor("a", 2, {100});
    data.externalize(a, 0);
    auto b = rawTensor("b", 2, {100});
    data.externalize(b, 100);
    *model.mutable_graph()->add_initializer() = a;
    *model.mutable_graph()->add_initializer() = b;
    QVERIFY(data.save(dir.path()));
    QVERIFY(saveModel(model, dir.filePath("model.onnx")));
    auto loaded = Model::load(dir.filePath("model.onnx").toStdString());
    QVERIFY(loaded.ok());
    QVERIFY(QFile::resize(dir.filePath("layout.bin"), 150));

    const auto layouts = computeLayout(**loaded, kDefaultAlignment);
    QCOMPARE(layouts.size(), size_t(1));
    QCOMPARE(layouts[0].bytes, 150ull);
    QCOMPARE(layouts[0].referencedBytes, 150ull);
    QCOMPARE(layouts[0].orphanedBytes, 0ull);
}

QTEST_APPLESS_MAIN(TestFileLayout)
#include "tst_file_layout.moc"
