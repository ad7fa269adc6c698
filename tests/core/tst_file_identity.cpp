// One way to tell files apart (core/file_identity.h): hard links and symlinks are one file,
// another spelling of a path is the same name, a rewritten file is no longer the file checked,
// and a name that cannot be examined is "could not tell", never "different".
#include "core/file_identity.h"
#include "core/posix_file.h"
#include "core/result.h"
#include "tests/support/result_checks.h"

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace repack;

class TestFileIdentity : public QObject {
    Q_OBJECT

private slots:
    void linksAreOneFile();
    void distinctFilesDiffer();
    void aMissingNameCannotBeTold();
    void spellingsOfAPathNotYetWrittenAreOneName();
    void aRewrittenFileIsNoLongerTheOneChecked();
    void openingAMissingFileIsNotFound();
    void aNewFileWithTheOldInodeSizeAndTimesIsNotTheOld();

private:
    static fs::path write(const fs::path& path, const std::string& bytes)
    {
        std::ofstream(path, std::ios::binary) << bytes;
        return path;
    }
};

void TestFileIdentity::linksAreOneFile()
{
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    const fs::path a = write(root / "a.bin", "abc");
    fs::create_hard_link(a, root / "hard.bin");
    fs::create_symlink("a.bin", root / "soft.bin");
    QCOMPARE(sameFile(a, root / "hard.bin"), Sameness::Same);
    QCOMPARE(sameFile(a, root / "soft.bin"), Sameness::Same);
    QVERIFY(samePathOrFile(root / "hard.bin", root / "soft.bin"));
    QCOMPARE(fileIdOf(a), fileIdOf(root / "soft.bin"));
}

void TestFileIdentity::distinctFilesDiffer()
{
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    const fs::path a = write(root / "a.bin", "abc");
    const fs::path b = write(root / "b.bin", "abc"); // same bytes, another file
    QCOMPARE(sameFile(a, b), Sameness::Different);
    QVERIFY(!samePathOrFile(a, b));
}

void TestFileIdentity::aMissingNameCannotBeTold()
{
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    const fs::path a = write(root / "a.bin", "abc");
    QCOMPARE(sameFile(a, root / "gone.bin"), Sameness::CouldNotTell);
    fs::create_symlink("nowhere.bin", root / "dangling.bin");
    QCOMPARE(sameFile(root / "dangling.bin", a), Sameness::CouldNotTell);
    QVERIFY(!fileIdOf(root / "dangling.bin"));
}

void TestFileIdentity::spellingsOfAPathNotYetWrittenAreOneName()
{
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    QVERIFY(samePathOrFile(root / "out.onnx", root / "." / "sub" / ".." / "out.onnx"));
    QVERIFY(!samePathOrFile(root / "out.onnx", root / "out2.onnx"));
}

void TestFileIdentity::aRewrittenFileIsNoLongerTheOneChecked()
{
    QTemporaryDir dir;
    const fs::path path = write(fs::path(dir.path().toStdString()) / "w.bin", "abcd");
    FileIdentity checked;
    {
        auto fd = UniqueFd::openRead(path);
        QVERIFY_OK(fd);
        auto identity = identityOf(fd->get());
        QVERIFY_OK(identity);
        QCOMPARE(identity->size, uint64_t(4));
        checked = *identity;
    }
    QVERIFY(namesFile(path, checked));

    QVERIFY(::truncate(path.c_str(), 2) == 0); // same inode, new size
    QVERIFY(!namesFile(path, checked));

    fs::remove(path); // a new file under the old name
    write(path, "abcd");
    QVERIFY(!namesFile(path, checked));
    fs::remove(path);
    QVERIFY(!namesFile(path, checked));
}

void TestFileIdentity::openingAMissingFileIsNotFound()
{
    QTemporaryDir dir;
    auto fd = UniqueFd::openRead(fs::path(dir.path().toStdString()) / "missing.onnx");
    QVERIFY_FAILS_WITH(fd, "missing.onnx");
    QVERIFY(fd.error().is(ErrorKind::NotFound));
    auto folder = UniqueFd::openRead(fs::path(dir.path().toStdString()));
    QVERIFY(!folder.ok());
    QVERIFY(!folder.error().is(ErrorKind::NotFound));
}

// ext4 gives a new file the inode just freed. With the old size and its modification time set
// back (cp -p, rsync -t, touch -r do), only the birth time tells the new file from the old.
void TestFileIdentity::aNewFileWithTheOldInodeSizeAndTimesIsNotTheOld()
{
    QTemporaryDir dir;
    const fs::path path = write(fs::path(dir.path().toStdString()) / "w.bin", "abcd");
    auto before = statusAt(path);
    QVERIFY(before);
    if (before->stamp.identity.bornNs == 0)
        QSKIP("this file system keeps no birth time");
    const FileIdentity checked = before->stamp.identity;
    // Past the coarse clock's tick that stamps a new inode (at most 10 ms).
    ::usleep(30000);
    fs::remove(path);
    write(path, "wxyz");
    const struct timespec times[2]
        = {{0, UTIME_OMIT}, {checked.modifiedNs / 1000000000, checked.modifiedNs % 1000000000}};
    QVERIFY(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
    auto after = statusAt(path);
    QVERIFY(after);
    if (!(after->stamp.identity.id == checked.id))
        QSKIP("the file system gave the new file another inode: nothing to tell apart");
    QCOMPARE(after->stamp.identity.size, checked.size);
    QCOMPARE(after->stamp.identity.modifiedNs, checked.modifiedNs);
    QVERIFY(after->stamp.identity.bornNs != checked.bornNs);
    QVERIFY(!namesFile(path, checked));
}

QTEST_GUILESS_MAIN(TestFileIdentity)
#include "tst_file_identity.moc"
