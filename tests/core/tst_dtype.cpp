// Byte sizes of every ONNX element type: the numbers below are the ONNX IR spec's widths,
// written out by hand, so a wrong entry in core/dtype.cpp's table shows up here.
#include "core/dtype.h"

#include <QTest>

#include <limits>

using namespace repack;

class TestDtype : public QObject {
    Q_OBJECT
private slots:
    void byteSize_data();
    void byteSize();
    void stringAndUnknownHaveNoFixedSize();
    void overflowIsUnknown();
};

void TestDtype::byteSize_data()
{
    QTest::addColumn<int>("type");
    QTest::addColumn<QString>("name");
    QTest::addColumn<quint64>("elements");
    QTest::addColumn<quint64>("bytes");

    QTest::addRow("float") << 1 << "float" << quint64(6) << quint64(24);
    QTest::addRow("uint8") << 2 << "uint8" << quint64(6) << quint64(6);
    QTest::addRow("int8") << 3 << "int8" << quint64(6) << quint64(6);
    QTest::addRow("uint16") << 4 << "uint16" << quint64(6) << quint64(12);
    QTest::addRow("int16") << 5 << "int16" << quint64(6) << quint64(12);
    QTest::addRow("int32") << 6 << "int32" << quint64(6) << quint64(24);
    QTest::addRow("int64") << 7 << "int64" << quint64(6) << quint64(48);
    QTest::addRow("bool") << 9 << "bool" << quint64(6) << quint64(6);
    QTest::addRow("float16") << 10 << "float16" << quint64(6) << quint64(12);
    QTest::addRow("double") << 11 << "double" << quint64(6) << quint64(48);
    QTest::addRow("uint32") << 12 << "uint32" << quint64(6) << quint64(24);
    QTest::addRow("uint64") << 13 << "uint64" << quint64(6) << quint64(48);
    QTest::addRow("complex64") << 14 << "complex64" << quint64(6) << quint64(48);
    QTest::addRow("complex128") << 15 << "complex128" << quint64(6) << quint64(96);
    QTest::addRow("bfloat16") << 16 << "bfloat16" << quint64(6) << quint64(12);
    QTest::addRow("float8e4m3fn") << 17 << "float8e4m3fn" << quint64(6) << quint64(6);
    QTest::addRow("float8e4m3fnuz") << 18 << "float8e4m3fnuz" << quint64(6) << quint64(6);
    QTest::addRow("float8e5m2") << 19 << "float8e5m2" << quint64(6) << quint64(6);
    QTest::addRow("float8e5m2fnuz") << 20 << "float8e5m2fnuz" << quint64(6) << quint64(6);
    QTest::addRow("float8e8m0") << 24 << "float8e8m0" << quint64(6) << quint64(6);
    // Sub-byte types pack two elements a byte; an odd count rounds up to a whole byte.
    QTest::addRow("uint4 even") << 21 << "uint4" << quint64(6) << quint64(3);
    QTest::addRow("uint4 odd") << 21 << "uint4" << quint64(7) << quint64(4);
    QTest::addRow("uint4 one") << 21 << "uint4" << quint64(1) << quint64(1);
    QTest::addRow("int4 odd") << 22 << "int4" << quint64(5) << quint64(3);
    QTest::addRow("int4 even") << 22 << "int4" << quint64(4) << quint64(2);
    QTest::addRow("float4e2m1 odd") << 23 << "float4e2m1" << quint64(9) << quint64(5);
    QTest::addRow("empty tensor") << 1 << "float" << quint64(0) << quint64(0);
    QTest::addRow("int4 empty") << 22 << "int4" << quint64(0) << quint64(0);
}

void TestDtype::byteSize()
{
    QFETCH(int, type);
    QFETCH(QString, name);
    QFETCH(quint64, elements);
    QFETCH(quint64, bytes);

    const auto actual = dtype::byteSize(type, elements);
    QVERIFY(actual.has_value());
    QCOMPARE(*actual, bytes);
    const auto actualName = dtype::name(type);
    QVERIFY(actualName.has_value());
    QCOMPARE(QString::fromUtf8(actualName->data(), qsizetype(actualName->size())), name);
}

void TestDtype::stringAndUnknownHaveNoFixedSize()
{
    // Strings are sized by their contents, not by a width; unknown numbers have no size at all.
    QVERIFY(!dtype::byteSize(dtype::String, 3).has_value());
    QCOMPARE(dtype::bitsPerElement(dtype::String), 0);
    QVERIFY(dtype::name(dtype::String).has_value());
    QVERIFY(!dtype::byteSize(dtype::Undefined, 3).has_value());
    QVERIFY(!dtype::byteSize(25, 3).has_value());
    QVERIFY(!dtype::byteSize(-1, 3).has_value());
    QVERIFY(!dtype::name(25).has_value());
    QVERIFY(!dtype::name(-1).has_value());
}

void TestDtype::overflowIsUnknown()
{
    const uint64_t max = std::numeric_limits<uint64_t>::max();
    QVERIFY(!dtype::byteSize(dtype::Float, max / 2).has_value());
    QVERIFY(!dtype::byteSize(dtype::Complex128, max / 8).has_value());
    QCOMPARE(dtype::byteSize(dtype::Uint8, max).value_or(0), max);
    // Packing halves the count, so the largest int4 tensor still has a size.
    QCOMPARE(dtype::byteSize(dtype::Int4, max).value_or(0), max / 2 + 1);
}

QTEST_APPLESS_MAIN(TestDtype)
#include "tst_dtype.moc"
