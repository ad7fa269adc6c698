// A local file as a ByteSource (core/io/local_source.h): ranges are views of one mapping, a
// range past the end and a file that is not the one opened anymore are errors naming the file,
// a file truncated underneath is an error and never a dead process, and what a read hands out
// keeps the mapping alive after the source itself is gone. DataFile reads through it.
#include "core/io/local_source.h"
#include "core/mapped_memory.h"
#include "core/model/data_file.h"
#include "core/model/tensor_info.h"
#include "core/posix_file.h"
#include "tests/support/result_checks.h"

#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace fs = std::filesystem;
using namespace repack;

namespace {

std::string patternBytes(size_t size, unsigned seed = 0)
{
    std::string bytes(size, '\0');
    for (size_t i = 0; i < size; ++i)
        bytes[i] = static_cast<char>((i * 131 + seed * 7 + i / 251) & 0xff);
    return bytes;
}

fs::path write(const fs::path& path, const std::string& bytes)
{
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}

FileIdentity identityOfPath(const fs::path& path)
{
    auto fd = UniqueFd::openRead(path);
    if (!fd)
        return {};
    auto identity = identityOf(fd->get());
    return identity ? *identity : FileIdentity{};
}

TensorInfo tensorNamed(const std::string& name)
{
    TensorInfo tensor;
    tensor.name = name;
    return tensor;
}

std::string text(const TensorBytes& bytes)
{
    const auto span = bytes.bytes();
    return std::string(reinterpret_cast<const char*>(span.data()), span.size());
}

// `bytes` copied out inside readMapped, as every reader of mapped bytes does.
Result<std::string> copyGuarded(const TensorBytes& bytes, const std::string& what)
{
    std::string out(bytes.bytes().size(), '\0');
    if (Status s
        = readMapped(what, [&] { std::memcpy(out.data(), bytes.bytes().data(), out.size()); });
        !s)
        return s.error();
    return out;
}

} // namespace

class TestByteSource : public QObject {
    Q_OBJECT

private slots:
    void readsRangesOfTheFile();
    void aRangePastTheEndIsRefusedNamingTheFile_data();
    void aRangePastTheEndIsRefusedNamingTheFile();
    void identityIsTheFileIdentity();
    void aFileReplacedAfterOpeningIsChanged_data();
    void aFileReplacedAfterOpeningIsChanged();
    void aTruncatedFileIsAnErrorNotACrash();
    void readBytesOutliveTheSource();
    void dataFileReadsThroughItsSource();

private:
    QTemporaryDir m_dir;
    fs::path path(const char* name) const { return fs::path(m_dir.path().toStdString()) / name; }
};

void TestByteSource::readsRangesOfTheFile()
{
    const std::string content = patternBytes(3 * 4096 + 17);
    const fs::path file = write(path("ranges.bin"), content);
    auto source = LocalSource::make(file, identityOfPath(file));
    QVERIFY(source->isLocal());
    QCOMPARE(source->displayName(), file.string());
    QCOMPARE(source->mapCount(), 0); // nothing opened before the first read

    const std::pair<uint64_t, uint64_t> ranges[] = {{0, content.size()}, {0, 1}, {1, 4096},
        {4095, 2}, {content.size() - 17, 17}, {content.size(), 0}, {5000, 0}};
    for (const auto& [offset, length] : ranges) {
        auto bytes = source->read(offset, length);
        QVERIFY_OK(bytes);
        QCOMPARE(bytes->bytes().size(), length);
        auto copy = copyGuarded(*bytes, file.string());
        QVERIFY_OK(copy);
        QVERIFY2(*copy == content.substr(offset, length),
            qPrintable(QStringLiteral("range %1+%2").arg(offset).arg(length)));
        // Mapped bytes are not lent: their readers must guard them with readMapped.
        QVERIFY(!bytes->isLent());
    }
    QCOMPARE(source->mapCount(), 1); // one mapping for every read
}

void TestByteSource::aRangePastTheEndIsRefusedNamingTheFile_data()
{
    QTest::addColumn<quint64>("offset");
    QTest::addColumn<quint64>("length");
    QTest::addRow("one byte too long") << quint64(4000) << quint64(97);
    QTest::addRow("starting past the end") << quint64(4097) << quint64(0);
    QTest::addRow("length wrapping around") << quint64(1) << quint64(UINT64_MAX);
    QTest::addRow("offset near 2^64") << quint64(UINT64_MAX - 1) << quint64(2);
}

void TestByteSource::aRangePastTheEndIsRefusedNamingTheFile()
{
    QFETCH(quint64, offset);
    QFETCH(quint64, length);
    const fs::path file = write(path("short.bin"), patternBytes(4096));
    auto source = LocalSource::make(file, identityOfPath(file));
    auto bytes = source->read(offset, length);
    QVERIFY_FAILS_WITH(bytes, file.string() + ": range ");
    QVERIFY_FAILS_WITH(bytes, "lies past the end of the file (4096 bytes)");
    QVERIFY(bytes.error().is(ErrorKind::Corrupt));
    QVERIFY_OK(source->read(0, 4096)); // the source still reads what is there
}

void TestByteSource::identityIsTheFileIdentity()
{
    const fs::path file = write(path("identity.bin"), patternBytes(1234));
    const FileIdentity expected = identityOfPath(file);
    QVERIFY(expected.id.inode != 0);
    auto source = LocalSource::make(file, expected);
    const SourceIdentity& identity = source->identity();
    QVERIFY(std::holds_alternative<FileIdentity>(identity.version));
    QVERIFY(std::get<FileIdentity>(identity.version) == expected);
    QCOMPARE(identity.size, uint64_t(1234));
    QCOMPARE(identity.origin, fs::absolute(file).lexically_normal().string());
    // The same file opened again is the same source; a rewritten one is not.
    QVERIFY(LocalSource::make(file, identityOfPath(file))->identity() == identity);
    write(file, patternBytes(1235));
    QVERIFY(!(LocalSource::make(file, identityOfPath(file))->identity() == identity));
}

void TestByteSource::aFileReplacedAfterOpeningIsChanged_data()
{
    QTest::addColumn<bool>("readBefore");
    QTest::addRow("before the first read") << false;
    QTest::addRow("after a read mapped it") << true;
}

// A file renamed over the path, same size, other bytes: the source and the DataFile refuse
// it, whether or not the old file is already mapped (the mapping still shows the old bytes).
void TestByteSource::aFileReplacedAfterOpeningIsChanged()
{
    QFETCH(bool, readBefore);
    const std::string old = patternBytes(8192, 1);
    const fs::path file = write(path("replaced.bin"), old);
    auto source = LocalSource::make(file, identityOfPath(file));
    DataFile dataFile(file, identityOfPath(file));
    if (readBefore) {
        QVERIFY_OK(source->read(0, 8192));
        QVERIFY_OK(dataFile.view(0, 8192));
    }
    const fs::path other = write(path("replacement.tmp"), patternBytes(8192, 2));
    fs::rename(other, file);

    auto bytes = source->read(0, 8192);
    QVERIFY_FAILS_WITH(bytes, file.string() + ": invalidated: the file was replaced or changed");
    QVERIFY(bytes.error().is(ErrorKind::Changed));
    auto view = dataFile.view(0, 8192);
    QVERIFY_FAILS_WITH(view, file.string() + ": invalidated: the file was replaced or changed");
    QVERIFY(view.error().is(ErrorKind::Changed));
}

void TestByteSource::aTruncatedFileIsAnErrorNotACrash()
{
    const std::string content = patternBytes(1 << 20);
    const fs::path file = write(path("truncated.bin"), content);
    auto source = LocalSource::make(file, identityOfPath(file));
    auto before = source->read(0, content.size());
    QVERIFY_OK(before);
    QVERIFY(::truncate(file.c_str(), 0) == 0);

    // A read after the truncation sees the file changed before touching anything.
    auto after = source->read(4096, 4096);
    QVERIFY_FAILS_WITH(after, file.string() + ": invalidated");
    QVERIFY(after.error().is(ErrorKind::Changed));
    // Bytes read before fault when touched: inside readMapped that is an error, not SIGBUS.
    const std::string where = before->where(tensorNamed("w"));
    QCOMPARE(where, "/w (in " + file.string() + ")");
    auto copy = copyGuarded(*before, where);
    QVERIFY_FAILS_WITH(copy, where + ": the file shrank or changed while it was read");
}

void TestByteSource::readBytesOutliveTheSource()
{
    const std::string content = patternBytes(3 * 4096);
    const fs::path file = write(path("outlive.bin"), content);
    auto source = LocalSource::make(file, identityOfPath(file));
    std::weak_ptr<LocalSource> watch = source;
    auto bytes = source->read(4096, 8192);
    QVERIFY_OK(bytes);
    source.reset();
    QVERIFY(!watch.expired()); // the bytes hold the mapping
    QCOMPARE(text(*bytes), content.substr(4096, 8192));
    bytes->releasePages(); // reaches the source it came from
    QCOMPARE(text(*bytes), content.substr(4096, 8192)); // read again from the page cache
    bytes = Error::internal("dropped");
    QVERIFY(watch.expired()); // and let it go with the last of them
}

void TestByteSource::dataFileReadsThroughItsSource()
{
    const std::string content = patternBytes(2 * 4096);
    const fs::path file = write(path("data.bin"), content);
    DataFile dataFile(file, identityOfPath(file));
    QCOMPARE(dataFile.source().displayName(), file.string());
    QVERIFY(dataFile.source().isLocal());
    for (int i = 0; i < 3; ++i) {
        auto view = dataFile.view(100, 4096);
        QVERIFY_OK(view);
        QVERIFY(std::string(reinterpret_cast<const char*>(view->data()), view->size())
            == content.substr(100, 4096));
        dataFile.releaseView(*view);
    }
    QCOMPARE(dataFile.mapCount(), 1);
    // A view of the data file names it in errors, as it always did.
    auto view = dataFile.view(0, 10);
    QVERIFY_OK(view);
    QCOMPARE(TensorBytes::view(*view, &dataFile).where(tensorNamed("w")),
        "/w (in " + file.string() + ")");
    QCOMPARE(TensorBytes::view(*view).where(tensorNamed("w")), std::string("/w"));
    QVERIFY(!TensorBytes::view(*view, &dataFile).isLent());
    dataFile.invalidate("replaced by a save");
    QVERIFY_FAILS_WITH(dataFile.view(0, 10), file.string() + ": invalidated: replaced by a save");
}

QTEST_GUILESS_MAIN(TestByteSource)
#include "tst_byte_source.moc"
