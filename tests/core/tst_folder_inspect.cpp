// A folder of graphs as one unit (SPEC 9, `inspect DIR`): the models, the data files and who
// reads them, the content stored more than once across graphs (never merging other dtypes,
// shapes or bytes under one name), the loaders' verdicts on symlinks and hard links, and the
// same document from the CLI.
#include "core/inspect/folder_inspect.h"
#include "core/model/model.h"
#include "core/problem.h"
#include "tests/support/cli_run.h"
#include "tests/support/folder_fixtures.h"
#include "tests/support/graph_readers.h"
#include "tests/support/model_builder.h"
#include "tests/support/result_checks.h"
#include "tests/support/tensor_builder.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <unistd.h>

using namespace repack;
using namespace fixtures;

namespace {

const FolderModel* modelNamed(const FolderInspection& f, const std::string& name)
{
    auto it = std::find_if(
        f.models.begin(), f.models.end(), [&](const FolderModel& m) { return m.name == name; });
    return it == f.models.end() ? nullptr : &*it;
}

QStringList codesOf(const FolderInspection& f, const std::string& model = "*")
{
    QStringList out;
    for (const FolderProblem& p : f.problems)
        if (model == "*" || p.model == model)
            out << QString::fromStdString(p.code);
    out.sort();
    return out;
}

// "model:name" of each tensor of each shared group, a group per string, sorted.
QStringList groupsOf(const FolderInspection& f)
{
    QStringList out;
    for (const SharedContent& c : f.shared) {
        QStringList names;
        for (const SharedTensor& t : c.tensors)
            names << QString::fromStdString(t.model + ":" + t.name);
        names.sort();
        out << names.join(' ') + QString(" (%1 copies)").arg(c.copies);
    }
    out.sort();
    return out;
}

bool symlinkTo(const QString& target, const QString& link)
{
    return ::symlink(QFile::encodeName(target).constData(), QFile::encodeName(link).constData())
        == 0;
}

} // namespace

class TestFolderInspect : public QObject {
    Q_OBJECT

private slots:
    // An Optimum-shaped folder: the embedding in three graphs, a layer in both decoders, one
    // weight of the encoder's own. Each copy beyond the first counts once.
    void contentRepeatedAcrossGraphsIsGroupedAndCounted()
    {
        QTemporaryDir dir;
        const std::string embed = patternBytes(4096, 1), layer = patternBytes(2048, 2);
        QVERIFY(writeGraph(dir.path(), "encoder_model.onnx", "encoder_model.onnx_data",
            {{"embed", embed}, {"enc", patternBytes(3000, 3)}}));
        QVERIFY(writeGraph(dir.path(), "decoder_model.onnx", "decoder_model.onnx_data",
            {{"embed", embed}, {"layer", layer}}));
        QVERIFY(writeGraph(dir.path(), "decoder_with_past_model.onnx",
            "decoder_with_past_model.onnx_data", {{"shared.embed", embed}, {"layer", layer}}));

        auto folder = inspectFolder(dir.path().toStdString());
        QVERIFY_OK(folder);
        QCOMPARE(folder->models.size(), size_t(3));
        QCOMPARE(folder->models[0].name, std::string("decoder_model.onnx")); // sorted
        const FolderModel* encoder = modelNamed(*folder, "encoder_model.onnx");
        QVERIFY(encoder && encoder->model);
        QCOMPARE(encoder->tensors, size_t(2));
        QCOMPARE(encoder->externalBytes, uint64_t(4096 + 3000));
        QCOMPARE(encoder->inlineBytes, uint64_t(0));
        QCOMPARE(encoder->files, std::vector<std::string>{"encoder_model.onnx_data"});
        QVERIFY(encoder->loaders.onnx && encoder->loaders.onnxRuntime && encoder->loaders.onnxIr);

        QCOMPARE(groupsOf(*folder),
            QStringList({"decoder_model.onnx:embed decoder_with_past_model.onnx:shared.embed "
                         "encoder_model.onnx:embed (3 copies)",
                "decoder_model.onnx:layer decoder_with_past_model.onnx:layer (2 copies)"}));
        QCOMPARE(folder->shared.front().bytes, uint64_t(4096)); // the most duplicated first
        QCOMPARE(folder->duplicatedBytes, uint64_t(2 * 4096 + 2048));
        QCOMPARE(codesOf(*folder), QStringList{QString(code::DuplicatedContent.data())});

        QCOMPARE(folder->files.size(), size_t(3));
        for (const FolderFile& f : folder->files) {
            QCOMPARE(f.usedBy.size(), size_t(1));
            QCOMPARE(f.location, f.usedBy.front() + "_data");
        }
    }

    // Equal bytes are not equal content when the dtype or shape differ; equal names with other
    // bytes are two weights.
    void otherDtypeShapeOrBytesNeverGroup()
    {
        QTemporaryDir dir;
        const std::string bytes = patternBytes(2048, 5);
        QVERIFY(writeGraph(
            dir.path(), "a.onnx", "a.bin", {{"w", bytes}, {"same_name", patternBytes(4096, 6)}}));
        QVERIFY(writeGraph(dir.path(), "b.onnx", "b.bin",
            {{"w", bytes, onnx::TensorProto::INT8}, {"same_name", patternBytes(4096, 7)}}));
        QVERIFY(writeGraph(
            dir.path(), "c.onnx", "c.bin", {{"w", bytes, onnx::TensorProto::UINT8, {2, 1024}}}));

        auto folder = inspectFolder(dir.path().toStdString());
        QVERIFY_OK(folder);
        QCOMPARE(groupsOf(*folder), QStringList());
        QCOMPARE(folder->duplicatedBytes, uint64_t(0));
        QVERIFY(!codesOf(*folder).contains(QString(code::DuplicatedContent.data())));
    }

    // Two graphs that already read one range of one file hold one copy; an inline copy in a
    // third graph is a second one.
    void oneRangeReadByTwoGraphsIsOneCopy()
    {
        QTemporaryDir dir;
        const std::string embed = patternBytes(8192, 9);
        QVERIFY(writeGraph(dir.path(), "a.onnx", "shared.bin", {{"embed", embed}}));
        QVERIFY(writeGraph(dir.path(), "b.onnx", "shared.bin", {{"tied", embed}}));
        auto folder = inspectFolder(dir.path().toStdString());
        QVERIFY_OK(folder);
        QCOMPARE(groupsOf(*folder), QStringList{"a.onnx:embed b.onnx:tied (1 copies)"});
        QCOMPARE(folder->duplicatedBytes, uint64_t(0));
        QCOMPARE(folder->files.size(), size_t(1));
        QCOMPARE(folder->files[0].usedBy, (std::vector<std::string>{"a.onnx", "b.onnx"}));
        QCOMPARE(folder->files[0].bytes, uint64_t(8192));

        QVERIFY(writeGraph(dir.path(), "c.onnx", "", {{"inline_embed", embed, 2, {}, false}}));
        folder = inspectFolder(dir.path().toStdString());
        QVERIFY_OK(folder);
        QCOMPARE(groupsOf(*folder),
            QStringList{"a.onnx:embed b.onnx:tied c.onnx:inline_embed (2 copies)"});
        QCOMPARE(folder->duplicatedBytes, uint64_t(8192));
        QCOMPARE(modelNamed(*folder, "c.onnx")->inlineBytes, uint64_t(8192));
    }

    // Only tensors whose size equals another's are read: unique sizes map no data file.
    void uniqueSizesReadNoBytes()
    {
        QTemporaryDir dir;
        QVERIFY(writeGraph(dir.path(), "a.onnx", "a.bin",
            {{"x", patternBytes(2000, 1)}, {"y", patternBytes(3000, 2)}}));
        QVERIFY(writeGraph(dir.path(), "b.onnx", "b.bin", {{"z", patternBytes(5000, 3)}}));
        auto folder = inspectFolder(dir.path().toStdString());
        QVERIFY_OK(folder);
        QVERIFY(folder->shared.empty());
        for (const FolderModel& m : folder->models)
            for (const TensorInfo& t : m.model->tensors())
                QCOMPARE(t.external->file()->mapCount(), 0);
    }

    // A Hugging Face cache: both names are links into blobs/. onnx >= 1.21 refuses the symlink,
    // onnx_ir the data outside the folder; ONNX Runtime >= 1.24.2 accepts data beside the file
    // the model's link leads to.
    void cacheLayoutOfLinksIntoBlobs()
    {
        QTemporaryDir root;
        QDir(root.path()).mkpath("blobs");
        QDir(root.path()).mkpath("snapshots/rev");
        const QString blobs = root.filePath("blobs"), snapshot = root.filePath("snapshots/rev");
        QVERIFY(writeGraph(blobs, "model.onnx", "model.onnx_data", {{"w", patternBytes(4096)}}));
        QVERIFY(QFile::rename(blobs + "/model.onnx", blobs + "/aa11"));
        QVERIFY(QFile::rename(blobs + "/model.onnx_data", blobs + "/bb22"));
        QVERIFY(symlinkTo("../../blobs/aa11", snapshot + "/model.onnx"));
        QVERIFY(symlinkTo("../../blobs/bb22", snapshot + "/model.onnx_data"));

        auto folder = inspectFolder(snapshot.toStdString());
        QVERIFY_OK(folder);
        const FolderModel* m = modelNamed(*folder, "model.onnx");
        QVERIFY(m && m->model);
        QVERIFY(!m->loaders.onnx);
        QVERIFY(m->loaders.onnxRuntime);
        QVERIFY(!m->loaders.onnxIr);
        QCOMPARE(codesOf(*folder, "model.onnx"),
            QStringList({QString(code::LoaderDataOutside.data()),
                QString(code::LoaderSymlinkedData.data())}));
        for (const FolderProblem& p : folder->problems)
            if (p.code == code::LoaderDataOutside) {
                QVERIFY2(p.message.find("onnx >= 1.21 and onnx_ir refuse") != std::string::npos,
                    p.message.c_str());
                QVERIFY(p.message.find("ONNX Runtime") == std::string::npos);
            }
    }

    // A data file with a second hard link: onnx >= 1.21 and onnx_ir refuse, ONNX Runtime loads.
    void hardLinkedDataFile()
    {
        QTemporaryDir dir;
        QVERIFY(writeGraph(dir.path(), "a.onnx", "a.bin", {{"w", patternBytes(4096)}}));
        QVERIFY(::link(QFile::encodeName(dir.filePath("a.bin")).constData(),
                    QFile::encodeName(dir.filePath("backup.bin")).constData())
            == 0);
        auto folder = inspectFolder(dir.path().toStdString());
        QVERIFY_OK(folder);
        const FolderModel* m = modelNamed(*folder, "a.onnx");
        QVERIFY(!m->loaders.onnx && !m->loaders.onnxIr && m->loaders.onnxRuntime);
        QVERIFY(codesOf(*folder, "a.onnx").contains(QString(code::LoaderHardLinkedData.data())));
    }

    // A .onnx that does not load is an error naming it; the other graphs are still inspected,
    // and a data file no graph reads is listed with no reader.
    void unreadableModelAndUnusedFile()
    {
        QTemporaryDir dir;
        QVERIFY(writeGraph(dir.path(), "good.onnx", "good.bin", {{"w", patternBytes(2048)}}));
        QFile bad(dir.filePath("bad.onnx"));
        QVERIFY(bad.open(QIODevice::WriteOnly) && bad.write("\xff\xff\xff garbage") > 0);
        bad.close();
        QFile unused(dir.filePath("old.onnx_data"));
        QVERIFY(unused.open(QIODevice::WriteOnly) && unused.write(QByteArray(100, 'u')) == 100);
        unused.close();

        auto folder = inspectFolder(dir.path().toStdString());
        QVERIFY_OK(folder);
        const FolderModel* badModel = modelNamed(*folder, "bad.onnx");
        QVERIFY(badModel && !badModel->model);
        QVERIFY(modelNamed(*folder, "good.onnx")->model);
        QVERIFY(codesOf(*folder, "bad.onnx").contains(QString(code::ModelUnreadable.data())));
        auto old = std::find_if(folder->files.begin(), folder->files.end(),
            [](const FolderFile& f) { return f.location == "old.onnx_data"; });
        QVERIFY(old != folder->files.end());
        QVERIFY(old->usedBy.empty());
        QCOMPARE(old->bytes, uint64_t(100));
        QVERIFY(codesOf(*folder).contains(QString(code::UnusedDataFile.data())));
    }

    // The verdicts for ONNX Runtime are what ONNX Runtime does: a cache of links into blobs/,
    // a hard-linked data file, and a data link that leads out of the model's folder.
    void onnxRuntimeAgreesWithItsVerdicts()
    {
        if (!onnxRuntimeAvailable())
            QSKIP("ONNX Runtime is not installed for the tests (scripts/install-test-readers.sh)");
        QTemporaryDir root;
        QDir top(root.path());
        for (const char* sub : {"blobs", "snapshots/rev", "linked", "out/m"})
            QVERIFY(top.mkpath(sub));
        const std::string bytes = patternBytes(4096);
        QVERIFY(writeGraph(root.filePath("blobs"), "m.onnx", "m.onnx_data", {{"w", bytes}}));
        QVERIFY(QFile::rename(root.filePath("blobs/m.onnx"), root.filePath("blobs/aa11")));
        QVERIFY(QFile::rename(root.filePath("blobs/m.onnx_data"), root.filePath("blobs/bb22")));
        QVERIFY(symlinkTo("../../blobs/aa11", root.filePath("snapshots/rev/m.onnx")));
        QVERIFY(symlinkTo("../../blobs/bb22", root.filePath("snapshots/rev/m.onnx_data")));
        QVERIFY(writeGraph(root.filePath("linked"), "m.onnx", "m.onnx_data", {{"w", bytes}}));
        QVERIFY(::link(QFile::encodeName(root.filePath("linked/m.onnx_data")).constData(),
                    QFile::encodeName(root.filePath("linked/copy.bin")).constData())
            == 0);
        QVERIFY(writeGraph(root.filePath("out"), "m.onnx", "m.onnx_data", {{"w", bytes}}));
        QVERIFY(QFile::rename(root.filePath("out/m.onnx"), root.filePath("out/m/m.onnx")));
        QVERIFY(symlinkTo("../m.onnx_data", root.filePath("out/m/m.onnx_data")));

        for (const char* sub : {"snapshots/rev", "linked", "out/m"}) {
            auto folder = inspectFolder(root.filePath(sub).toStdString());
            QVERIFY_OK(folder);
            const QString failure = onnxRuntimeFailure({root.filePath(sub) + "/m.onnx"});
            QVERIFY2(folder->models.at(0).loaders.onnxRuntime == failure.isEmpty(),
                qPrintable(QString(sub) + ": " + (failure.isEmpty() ? "loads" : failure)));
        }
    }

    void notAFolderFails()
    {
        QTemporaryDir dir;
        QVERIFY_FAILS_WITH(inspectFolder(dir.filePath("missing").toStdString()), "not a folder");
    }

    // `inspect DIR --json` is the core's document; the text names the graphs and the copies;
    // an unreadable graph fails the command; --target is for one model.
    void cliInspectsAFolder()
    {
        QTemporaryDir dir;
        const std::string embed = patternBytes(4096, 4);
        QVERIFY(writeGraph(dir.path(), "encoder.onnx", "encoder.onnx_data", {{"embed", embed}}));
        QVERIFY(writeGraph(dir.path(), "decoder.onnx", "decoder.onnx_data", {{"embed", embed}}));

        const CliRun json = runCli({"inspect", dir.path(), "--json"});
        QCOMPARE(json.exitCode, 0);
        const QJsonObject doc = QJsonDocument::fromJson(json.out).object();
        QCOMPARE(doc["schema"].toString(), QString("onnx-repack/folder/1"));
        QCOMPARE(doc["models"].toArray().size(), 2);
        QCOMPARE(doc["models"][0]["path"].toString(), QString("decoder.onnx"));
        QCOMPARE(doc["models"][0]["external_bytes"].toInteger(), 4096);
        QCOMPARE(doc["models"][0]["loaders"]["onnx"].toBool(), true);
        QCOMPARE(doc["files"][1]["used_by"].toArray(), QJsonArray{"encoder.onnx"});
        QCOMPARE(doc["shared"][0]["tensors"].toArray().size(), 2);
        QCOMPARE(doc["shared"][0]["copies"].toInt(), 2);
        QCOMPARE(doc["duplicated_bytes"].toInteger(), 4096);
        QCOMPARE(doc["problems"][0]["code"].toString(), QString("duplicated-content"));

        const CliRun text = runCli({"inspect", dir.path()});
        QCOMPARE(text.exitCode, 0);
        QVERIFY(text.out.contains("decoder.onnx"));
        QVERIFY2(text.out.contains("decoder.onnx:graph/embed, encoder.onnx:graph/embed"),
            text.out.constData());

        QCOMPARE(runCli({"inspect", dir.path(), "--target", "ort"}).exitCode, 2);
        QFile bad(dir.filePath("broken.onnx"));
        QVERIFY(bad.open(QIODevice::WriteOnly) && bad.write("\xff\xff\xff") > 0);
        bad.close();
        const CliRun failing = runCli({"inspect", dir.path()});
        QCOMPARE(failing.exitCode, 1);
        QVERIFY(failing.out.contains("model-unreadable"));
    }
};

QTEST_APPLESS_MAIN(TestFolderInspect)
#include "tst_folder_inspect.moc"
