// Who reads a file (SPEC 5a, core/inspect/readers.h), end to end through the CLI, in the shapes a
// hostile review of issue 35 found: a model one folder above the one saved, a second name (hard
// link) of the model saved, a Save As whose output folder holds a link to the source, a temporary
// name crafted to point at another model, and bytes that fail their checksum in a file a save
// keeps. Each would lose or corrupt another model's bytes if the answer were wrong.
#include "tests/support/cli_run.h"
#include "tests/support/folder_fixtures.h"
#include "tests/support/model_builder.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <unistd.h>

using namespace fixtures;

namespace {

ShellRun runRepack(const QString& dir, const QStringList& args)
{
    return runCliInShell(dir, QStringLiteral("repack"), args);
}

ShellRun verify(const QString& dir, const QString& model)
{
    return runCliInShell(dir, QStringLiteral("verify"), {model});
}

// Options that move every tensor (aligned to 64, so B leaves offset 16): the data file is
// rewritten whatever it held.
const QStringList kMoveAll{
    "--data", "w.bin", "--align", "64", "--threshold", "0", "--align-threshold", "0"};

nlink_t linksOf(const QString& path)
{
    struct stat st { };
    return ::lstat(QFile::encodeName(path).constData(), &st) == 0 ? st.st_nlink : 0;
}

bool isSymlink(const QString& path)
{
    return QFileInfo(path).isSymLink();
}

} // namespace

class TestReaders : public QObject {
    Q_OBJECT

private slots:
    // big.onnx reads sub/w.bin (A at 0, B at 16); sub/small.onnx reads A of it. Saving small
    // in place would rewrite w.bin under big: consent names big.onnx; --remove-unused of a
    // file big reads keeps it.
    void aModelOneFolderUpIsAReader()
    {
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath("sub"));
        const std::string a = patternBytes(16, 1), b = patternBytes(16, 2);
        QVERIFY(writeGraph(dir.filePath("sub"), "small.onnx", "w.bin", {{"A", a}}));
        QVERIFY(writeGraph(dir.path(), "big.onnx", "sub/w.bin", {{"A", a}, {"B", b}}));
        const auto before = hashFolder(dir.filePath("sub"));
        const ShellRun refused = runRepack(
            dir.path(), QStringList{"sub/small.onnx", "-o", "sub/small.onnx"} + kMoveAll);
        QCOMPARE(refused.status, 3);
        QVERIFY2(refused.err.contains("big.onnx"), refused.err.constData());
        QCOMPARE(hashFolder(dir.filePath("sub")), before);

        // Moved into a file of its own, small stops using w.bin, which big still reads.
        const ShellRun moved = runRepack(dir.path(),
            {"sub/small.onnx", "-o", "sub/small.onnx", "--data", "own.bin", "--remove-unused"});
        QVERIFY2(moved.status == 0, moved.err.constData());
        QVERIFY(QFile::exists(dir.filePath("sub/w.bin")));
        const ShellRun big = verify(dir.path(), "big.onnx");
        QVERIFY2(big.status == 0, (big.out + big.err).constData());
    }

    // b.onnx is another name (a hard link) of a.onnx. A save of a.onnx renames a new model over
    // that name; b.onnx keeps the old one and reads the old layout: it is a reader to ask about.
    void aHardLinkOfTheModelSavedIsAReader()
    {
        QTemporaryDir dir;
        QVERIFY(writeGraph(dir.path(), "a.onnx", "w.bin",
            {{"A", patternBytes(16, 3)}, {"B", patternBytes(16, 4)}}));
        QVERIFY(::link(QFile::encodeName(dir.filePath("a.onnx")).constData(),
                    QFile::encodeName(dir.filePath("b.onnx")).constData())
            == 0);
        const auto before = hashFolder(dir.path());
        const ShellRun refused
            = runRepack(dir.path(), QStringList{"a.onnx", "-o", "a.onnx"} + kMoveAll);
        QCOMPARE(refused.status, 3);
        QVERIFY2(refused.err.contains("b.onnx"), refused.err.constData());
        QCOMPARE(hashFolder(dir.path()), before);
    }

    // out/w.bin is a symlink, or a hard link, to in/w.bin. A Save As of in/a.onnx into out keeping
    // every tensor where it is must write a file of its own there: a symlink left in place
    // escapes out/, a hard link is refused by onnx >= 1.21 and onnx_ir, and either way a later
    // save of the source would change what out/a.onnx reads.
    void aSaveAsThroughALinkWritesItsOwnFile_data()
    {
        QTest::addColumn<bool>("symlink");
        QTest::addRow("a symlink to the source's data file") << true;
        QTest::addRow("a hard link to the source's data file") << false;
    }
    void aSaveAsThroughALinkWritesItsOwnFile()
    {
        QFETCH(bool, symlink);
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath("in") && QDir(dir.path()).mkpath("out"));
        QVERIFY(writeGraph(dir.filePath("in"), "a.onnx", "w.bin",
            {{"A", patternBytes(16, 5)}, {"B", patternBytes(16, 6)}}));
        const QString source = dir.filePath("in/w.bin"), target = dir.filePath("out/w.bin");
        if (symlink)
            QVERIFY(QFile::link("../in/w.bin", target));
        else
            QVERIFY(
                ::link(QFile::encodeName(source).constData(), QFile::encodeName(target).constData())
                == 0);
        const ShellRun saved
            = runRepack(dir.path(), {"in/a.onnx", "-o", "out/a.onnx", "--keep", "--force"});
        QVERIFY2(saved.status == 0, saved.err.constData());
        QVERIFY(!isSymlink(target));
        QCOMPARE(linksOf(target), nlink_t(1));
        QCOMPARE(linksOf(source), nlink_t(1));
        const ShellRun checked = verify(dir.path(), "out/a.onnx");
        QVERIFY2(checked.status == 0, (checked.out + checked.err).constData());
    }

    // A model names "b.onnx.repack-tmp-0123456789ab", as if a save of b.onnx's data had been
    // interrupted; b.onnx is a model. clean must not link that file over the model.
    void cleanTakesNoFinalNameThatIsNoDataFile()
    {
        QTemporaryDir dir;
        QVERIFY(writeGraph(dir.path(), "b.onnx", "b.bin", {{"x", patternBytes(16, 7)}}));
        QVERIFY(writeGraph(
            dir.path(), "a.onnx", "b.onnx.repack-tmp-0123456789ab", {{"y", patternBytes(32, 8)}}));
        const QByteArray model = fileContents(dir.filePath("b.onnx"));
        const ShellRun cleaned = runCliInShell(dir.path(), "clean", {"a.onnx"});
        QVERIFY2(cleaned.status == 0, cleaned.err.constData());
        QVERIFY2(cleaned.err.contains("keeps its temporary name"), cleaned.err.constData());
        QCOMPARE(fileContents(dir.filePath("b.onnx")), model);
        QVERIFY(verify(dir.path(), "b.onnx").status == 0);
        QVERIFY(verify(dir.path(), "a.onnx").status == 0);
        // Keeping a's placement does not take that name either: it refuses the odd name.
        const ShellRun kept = runRepack(dir.path(), {"a.onnx", "-o", "a.onnx", "--keep"});
        QVERIFY2(kept.status != 0 && kept.err.contains("temporary"), kept.err.constData());
        QCOMPARE(fileContents(dir.filePath("b.onnx")), model);
    }
};

QTEST_GUILESS_MAIN(TestReaders)
#include "tst_readers.moc"
