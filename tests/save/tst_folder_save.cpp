// A folder of graphs saved as one unit (SPEC 9, `repack DIR -o OUT --shared-data NAME`): each
// distinct content once in one shared data file, every graph's values intact for python3-onnx,
// never merging other dtypes or bytes under one name, a re-run that writes nothing, siblings
// outside the set asked about and their files kept, and a kill at every step of the protocol
// leaving every graph loadable with its values.
#include "core/inspect/folder_inspect.h"
#include "core/save/folder_save.h"
#include "tests/support/cli_run.h"
#include "tests/support/folder_fixtures.h"
#include "tests/support/graph_readers.h"
#include "tests/support/python_reader.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace repack;
using namespace fixtures;

namespace {

const QString kValues = QStringLiteral(REPACK_VALUES_SCRIPT);
using Run = ShellRun;

// `onnx-repack repack ARGS`; `crashAt` is the test hook.
Run runRepack(const QStringList& args, const QString& crashAt = {})
{
    return runCliInShell(QDir::currentPath(), QStringLiteral("repack"), args, crashAt);
}

// An Optimum-shaped folder: an embedding in all three graphs (under another name in one), a
// layer in both decoders, a weight of the encoder's own held inline, "w" with other bytes in
// each decoder, and the layer's bytes as int8 in one graph.
struct Export {
    std::map<QString, std::vector<Weight>> graphs; // model name -> its weights
    uint64_t distinctBytes = 0;
};

Export optimumExport()
{
    const std::string embed = patternBytes(4096, 1), layer = patternBytes(2048, 2);
    Export e;
    e.graphs["encoder_model.onnx"]
        = {{"embed", embed}, {"enc_own", patternBytes(3000, 3), 2, {}, false}};
    e.graphs["decoder_model.onnx"]
        = {{"embed", embed}, {"layer", layer}, {"w", patternBytes(1500, 4)}};
    e.graphs["decoder_with_past_model.onnx"] = {{"shared.embed", embed}, {"layer", layer},
        {"w", patternBytes(1500, 5)}, {"layer_i8", layer, onnx::TensorProto::INT8}};
    e.distinctBytes = 4096 + 3000 + 2048 + 1500 + 1500 + 2048;
    return e;
}

bool writeExport(const QString& dir, const Export& e)
{
    for (const auto& [name, weights] : e.graphs)
        if (!writeGraph(dir, name, name.toStdString() + "_data", weights))
            return false;
    return true;
}

} // namespace

class TestFolderSave : public QObject {
    Q_OBJECT

private:
    // Every graph of `dir` loads in python3-onnx with the values of `e`.
    static bool valuesIntact(const QString& dir, const Export& e, const QString& context)
    {
        for (const auto& [name, weights] : e.graphs) {
            const PythonLoad load = loadInPython(kValues, dir + "/" + name);
            if (!load.ok) {
                qWarning("%s: %s: onnx.load fails: %s", qPrintable(context), qPrintable(name),
                    qPrintable(load.error));
                return false;
            }
            const QString diff = compareValues(load.values, hashesOf(bytesOf(weights)));
            if (!diff.isEmpty()) {
                qWarning("%s: %s reads other values:\n%s", qPrintable(context), qPrintable(name),
                    qPrintable(diff));
                return false;
            }
        }
        return true;
    }

private slots:
    void inPlaceEachContentOnce()
    {
        QTemporaryDir dir;
        const Export e = optimumExport();
        QVERIFY(writeExport(dir.path(), e));

        const Run run
            = runRepack({dir.path(), "-o", dir.path(), "--shared-data", "shared.onnx_data"});
        QVERIFY2(run.status == 0, run.err.constData());
        QVERIFY(valuesIntact(dir.path(), e, "after the folder save"));
        // ONNX Runtime (where installed) builds a session for every graph reading the shared file.
        const QString ort = onnxRuntimeFailure({dir.filePath("encoder_model.onnx"),
            dir.filePath("decoder_model.onnx"), dir.filePath("decoder_with_past_model.onnx")});
        QVERIFY2(ort.isEmpty(), qPrintable(ort));
        QCOMPARE(QFileInfo(dir.filePath("shared.onnx_data")).size(), qint64(e.distinctBytes));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files),
            QStringList({"decoder_model.onnx", "decoder_with_past_model.onnx", "encoder_model.onnx",
                "shared.onnx_data"})); // old files gone, no temporary
        auto folder = inspectFolder(dir.path().toStdString());
        QVERIFY(folder);
        QCOMPARE(folder->duplicatedBytes, uint64_t(0));
        QCOMPARE(folder->files.size(), size_t(1));
        QCOMPARE(folder->files[0].usedBy.size(), size_t(3));

        // Nothing to change: nothing written.
        const auto before = hashFolder(dir.path());
        const Run again
            = runRepack({dir.path(), "-o", dir.path(), "--shared-data", "shared.onnx_data"});
        QCOMPARE(again.status, 0);
        QVERIFY2(again.out.contains("nothing to change"), again.out.constData());
        QCOMPARE(hashFolder(dir.path()), before);
    }

    void toAnotherFolderLeavesTheSourceAlone()
    {
        QTemporaryDir dir;
        const Export e = optimumExport();
        QVERIFY(writeExport(dir.path(), e));
        const auto before = hashFolder(dir.path());
        const QString out = dir.filePath("../" + QFileInfo(dir.path()).fileName() + "-shared");
        const Run run = runRepack({dir.path(), "-o", out, "--shared-data", "weights.bin"});
        QVERIFY2(run.status == 0, run.err.constData());
        QCOMPARE(hashFolder(dir.path()), before);
        QVERIFY(valuesIntact(out, e, "the new folder"));
        QVERIFY(valuesIntact(dir.path(), e, "the source folder"));
        QCOMPARE(QDir(out).entryList(QDir::Files).size(), 4);
        QDir(out).removeRecursively();
    }

    // A model of the folder outside the set reads the file the save would replace: consent,
    // naming it, and nothing written; a data file it shares with a graph of the set is kept.
    void aSiblingOutsideTheSet()
    {
        QTemporaryDir dir;
        const std::string embed = patternBytes(4096, 7);
        QVERIFY(writeGraph(dir.path(), "a.onnx", "a.bin", {{"embed", embed}}));
        QVERIFY(writeGraph(dir.path(), "b.onnx", "b.bin", {{"embed", embed}}));
        QVERIFY(writeGraph(dir.path(), "c.onnx", "shared.bin", {{"other", patternBytes(2048, 8)}}));
        const auto before = hashFolder(dir.path());
        const Run refused = runRepack({dir.path(), "-o", dir.path(), "--shared-data", "shared.bin",
            "--models", "a.onnx,b.onnx"});
        QCOMPARE(refused.status, 3);
        QVERIFY2(refused.err.contains("c.onnx reads it"), refused.err.constData());
        QCOMPARE(hashFolder(dir.path()), before);

        // c also reads a's data file: it stays, and c keeps its values.
        QVERIFY(writeGraph(dir.path(), "c.onnx", "a.bin", {{"embed", embed}}));
        const Run run = runRepack(
            {dir.path(), "-o", dir.path(), "--shared-data", "ab.bin", "--models", "a.onnx,b.onnx"});
        QVERIFY2(run.status == 0, run.err.constData());
        QVERIFY(QFile::exists(dir.filePath("a.bin")));
        QVERIFY(!QFile::exists(dir.filePath("b.bin")));
        QCOMPARE(QFileInfo(dir.filePath("ab.bin")).size(), qint64(4096));
        Export e;
        e.graphs["a.onnx"] = {{"embed", embed}};
        e.graphs["b.onnx"] = {{"embed", embed}};
        e.graphs["c.onnx"] = {{"embed", embed}};
        QVERIFY(valuesIntact(dir.path(), e, "after saving a and b"));
    }

    // One graph of a shared set saved on its own later: replacing the shared file asks consent
    // naming the other graphs; saving it into its own file leaves them reading the shared one.
    void oneGraphSavedAloneLater()
    {
        QTemporaryDir dir;
        const Export e = optimumExport();
        QVERIFY(writeExport(dir.path(), e));
        QCOMPARE(
            runRepack({dir.path(), "-o", dir.path(), "--shared-data", "shared.onnx_data"}).status,
            0);
        const QString decoder = dir.filePath("decoder_model.onnx");
        const Run refused = runRepack({decoder, "-o", decoder, "--data", "shared.onnx_data"});
        QCOMPARE(refused.status, 3);
        QVERIFY2(refused.err.contains("encoder_model.onnx")
                && refused.err.contains("decoder_with_past_model.onnx"),
            refused.err.constData());
        const Run own = runRepack({decoder, "-o", decoder, "--remove-unused"});
        QVERIFY2(own.status == 0, own.err.constData());
        QVERIFY(QFile::exists(dir.filePath("decoder_model.onnx.data")));
        QVERIFY(QFile::exists(dir.filePath("shared.onnx_data"))); // the others read it
        QVERIFY(valuesIntact(dir.path(), e, "after saving the decoder on its own"));
    }

    void killedAtEveryStep_data()
    {
        QTest::addColumn<QString>("point");
        QTest::addColumn<bool>("resave"); // over the shared file the graphs read now
        for (bool resave : {false, true})
            for (const char* point : {"locked", "data-written", "models-written",
                     "model-temp-committed", "data-swapped", "model-final-committed", "cleaned"})
                QTest::addRow("%s%s", resave ? "re-save, " : "", point) << QString(point) << resave;
    }
    void killedAtEveryStep()
    {
        QFETCH(QString, point);
        QFETCH(bool, resave);
        QTemporaryDir dir;
        const Export e = optimumExport();
        QVERIFY(writeExport(dir.path(), e));
        QStringList layout;
        if (resave) { // shared already; now every tensor moves within the file it is read from
            QCOMPARE(runRepack({dir.path(), "-o", dir.path(), "--shared-data", "shared.onnx_data"})
                         .status,
                0);
            layout = QStringList{"--align", "64", "--align-threshold", "0"};
        }
        const Run killed = runRepack(
            QStringList{dir.path(), "-o", dir.path(), "--shared-data", "shared.onnx_data"} + layout,
            point);
        QCOMPARE(killed.status, kSigkillStatus);
        QVERIFY(valuesIntact(dir.path(), e, "killed at " + point));
        const Run again
            = runRepack({dir.path(), "-o", dir.path(), "--shared-data", "shared.onnx_data"});
        QVERIFY2(again.status == 0, again.err.constData());
        QVERIFY(valuesIntact(dir.path(), e, "saved again after the kill at " + point));
    }

    // The commit refused (the first graph's rename fails): an error, nothing changed, no
    // temporary left. No hard links (the shared file cannot take its final name): saved with a
    // warning, every graph reading the complete temporary; the next save gives it its name.
    void faultsAtTheCommit()
    {
        QTemporaryDir dir;
        const Export e = optimumExport();
        QVERIFY(writeExport(dir.path(), e));
        const auto before = hashFolder(dir.path());
        const QStringList args{dir.path(), "-o", dir.path(), "--shared-data", "shared.onnx_data"};
        const Run refused = runCliInShell(dir.path(), "repack", args, {}, "rename-model-temp");
        QVERIFY2(refused.status == 1, refused.err.constData());
        QCOMPARE(hashFolder(dir.path()), before);

        const Run noLinks = runCliInShell(dir.path(), "repack", args, {}, "link-data");
        QVERIFY2(noLinks.status == 0 && noLinks.err.contains("warning"), noLinks.err.constData());
        QVERIFY(valuesIntact(dir.path(), e, "without hard links"));
        QVERIFY(!QFile::exists(dir.filePath("shared.onnx_data")));
        QCOMPARE(saveTempsIn(dir.path()).size(), 1); // the shared data, under its temporary name
        const Run again = runRepack(args);
        QVERIFY2(again.status == 0, again.err.constData());
        QVERIFY(valuesIntact(dir.path(), e, "saved again"));
        QVERIFY(QFile::exists(dir.filePath("shared.onnx_data")));
        QCOMPARE(saveTempsIn(dir.path()), QStringList());
    }

    // `plan DIR` says what the save would write and remove, and writes nothing.
    void planWritesNothing()
    {
        QTemporaryDir dir;
        const Export e = optimumExport();
        QVERIFY(writeExport(dir.path(), e));
        const auto before = hashFolder(dir.path());
        const QStringList args{dir.path(), "--shared-data", "shared.onnx_data", "--json"};
        const Run planned = runCliInShell(dir.path(), "plan", args);
        QVERIFY2(planned.status == 0, planned.err.constData());
        QCOMPARE(hashFolder(dir.path()), before);
        QJsonObject doc = QJsonDocument::fromJson(planned.out).object();
        QCOMPARE(doc["schema"].toString(), QString("onnx-repack/folder-plan/1"));
        QCOMPARE(doc["shared_bytes"].toInteger(), qint64(e.distinctBytes));
        QCOMPARE(doc["would_remove"].toArray().size(), 3);
        QCOMPARE(doc["unchanged"].toBool(), false);
        QVERIFY(doc["consent_needed"].isNull());

        QCOMPARE(
            runRepack({dir.path(), "-o", dir.path(), "--shared-data", "shared.onnx_data"}).status,
            0);
        doc = QJsonDocument::fromJson(runCliInShell(dir.path(), "plan", args).out).object();
        QCOMPARE(doc["unchanged"].toBool(), true);
        QCOMPARE(doc["would_remove"].toArray().size(), 0);
        // Another name that exists and no graph reads: the save would need consent.
        QVERIFY(writeGraph(dir.path(), "other.onnx", "taken.bin", {{"x", patternBytes(2048, 9)}}));
        doc = QJsonDocument::fromJson(runCliInShell(dir.path(), "plan",
                                          {dir.path(), "--shared-data", "taken.bin", "--models",
                                              "encoder_model.onnx", "--json"})
                                          .out)
                  .object();
        QVERIFY2(doc["consent_needed"].toString().contains("other.onnx"),
            qPrintable(QJsonDocument(doc).toJson()));
    }

    // `plan DIR --diff`: each graph's tensors moving into the shared file and its own data
    // file going unused, then nothing once saved; written nowhere.
    void planDiffShowsEachGraph()
    {
        QTemporaryDir dir;
        const Export e = optimumExport();
        QVERIFY(writeExport(dir.path(), e));
        const auto before = hashFolder(dir.path());
        const QStringList args{dir.path(), "--shared-data", "shared.onnx_data", "--diff", "--json"};
        const Run planned = runCliInShell(dir.path(), "plan", args);
        QVERIFY2(planned.status == 0, planned.err.constData());
        QCOMPARE(hashFolder(dir.path()), before);
        QJsonObject doc = QJsonDocument::fromJson(planned.out).object();
        QCOMPARE(doc["schema"].toString(), QString("onnx-repack/folder-plan-diff/1"));
        QCOMPARE(doc["shared_bytes"].toInteger(), qint64(e.distinctBytes));
        const QJsonArray graphs = doc["graphs"].toArray();
        QCOMPARE(graphs.size(), 3);
        QStringList names;
        for (const QJsonValue& value : graphs) {
            const QJsonObject g = value.toObject();
            names << g["model"].toString();
            QVERIFY(g["totals"].toObject()["changed"].toInt() > 0);
            QVERIFY(!g["moved"].toArray().isEmpty());
            QMap<QString, QString> changes;
            for (const QJsonValue& f : g["files"].toArray())
                changes[f.toObject()["location"].toString()] = f.toObject()["change"].toString();
            QCOMPARE(changes.value("shared.onnx_data"), QString("new"));
            QCOMPARE(changes.size(), 2); // and its own data file, unused
            QVERIFY2(changes.values().contains("unused"), qPrintable(QJsonDocument(g).toJson()));
            for (const QJsonValue& f : g["files"].toArray())
                if (f.toObject()["location"].toString() == "shared.onnx_data")
                    QCOMPARE(f.toObject()["after"].toObject()["bytes"].toInteger(),
                        qint64(e.distinctBytes));
        }
        QCOMPARE(names,
            QStringList(
                {"decoder_model.onnx", "decoder_with_past_model.onnx", "encoder_model.onnx"}));
        const Run text = runCliInShell(
            dir.path(), "plan", {dir.path(), "--shared-data", "shared.onnx_data", "--diff"});
        QVERIFY2(text.status == 0 && text.out.contains("encoder_model.onnx:\n")
                && text.out.contains("unused") && text.out.contains("graph(s) would read"),
            text.out.constData());

        QCOMPARE(
            runRepack({dir.path(), "-o", dir.path(), "--shared-data", "shared.onnx_data"}).status,
            0);
        doc = QJsonDocument::fromJson(runCliInShell(dir.path(), "plan", args).out).object();
        QCOMPARE(doc["unchanged"].toBool(), true);
        for (const QJsonValue& value : doc["graphs"].toArray())
            QCOMPARE(value.toObject()["totals"].toObject()["changed"].toInt(), 0);
    }

    // Each graph on its own: one that fails (cancelled here, once the first is saved) leaves
    // the graphs saved before it saved and itself and the rest untouched, and the error says
    // which is which; running it again finishes the folder.
    void aGraphThatFailsSaysWhichWereSaved()
    {
        QTemporaryDir dir;
        const Export e = optimumExport();
        QVERIFY(writeExport(dir.path(), e));
        const QString out = dir.filePath("out");
        CancelToken token;
        FolderSaveOptions options;
        options.layout.cancel = &token;
        options.layout.progress = [&](const Progress&) {
            if (QFileInfo::exists(out + "/decoder_model.onnx"))
                token.cancel(); // during the second graph's save
        };
        auto failed = saveFolder(dir.path().toStdString(), out.toStdString(), options);
        QVERIFY(!failed.ok());
        const QString message = QString::fromStdString(failed.error().message);
        QVERIFY2(message.contains("decoder_with_past_model.onnx was not saved")
                && message.contains("saved before it: decoder_model.onnx")
                && message.contains("encoder_model.onnx"),
            qPrintable(message));
        QCOMPARE(QDir(out).entryList({"*.onnx"}, QDir::Files), QStringList{"decoder_model.onnx"});
        QCOMPARE(saveTempsIn(out), QStringList());
        const PythonLoad first = loadInPython(kValues, out + "/decoder_model.onnx");
        QVERIFY2(first.ok, qPrintable(first.error));
        QCOMPARE(compareValues(
                     first.values, hashesOf(bytesOf(e.graphs.at(QString("decoder_model.onnx"))))),
            QString());

        QVERIFY2(message.contains("again with --force"), qPrintable(message)); // to a new folder
        options.layout.progress = {};
        options.layout.cancel = nullptr;
        options.layout.force = true; // the first graph wrote its data file there already
        auto finished = saveFolder(dir.path().toStdString(), out.toStdString(), options);
        QVERIFY2(finished.ok(), finished ? "" : finished.error().message.c_str());
        QVERIFY(valuesIntact(out, e, "the folder saved again"));
    }

    // Without --shared-data each graph is saved on its own, a target naming each data file after
    // its graph.
    void eachGraphWithItsOwnFile()
    {
        QTemporaryDir dir;
        const Export e = optimumExport();
        QVERIFY(writeExport(dir.path(), e));
        const QString out = dir.filePath("web");
        const Run run = runRepack({dir.path(), "-o", out, "--target", "web"});
        QVERIFY2(run.status == 0, run.err.constData());
        QVERIFY(valuesIntact(out, e, "each graph on its own"));
        QCOMPARE(QDir(out).entryList(QDir::Files),
            QStringList({"decoder_model.onnx", "decoder_model.onnx_data",
                "decoder_with_past_model.onnx", "decoder_with_past_model.onnx_data",
                "encoder_model.onnx", "encoder_model.onnx_data"}));
        const Run again = runRepack({out, "-o", out, "--target", "web"});
        QVERIFY2(
            again.status == 0 && again.out.contains("nothing to change"), again.out.constData());

        // Graphs that share a file, each kept as it is into a new folder, would both write it:
        // refused before anything is written.
        QCOMPARE(
            runRepack({dir.path(), "-o", dir.path(), "--shared-data", "shared.bin"}).status, 0);
        const QString kept = dir.filePath("kept");
        const Run both = runRepack({dir.path(), "-o", kept, "--keep"});
        QCOMPARE(both.status, 2);
        QVERIFY2(both.err.contains("would both write"), both.err.constData());
        QVERIFY(!QFileInfo::exists(kept));
    }

    void usageErrors()
    {
        QTemporaryDir dir;
        QVERIFY(writeGraph(dir.path(), "a.onnx", "a.bin", {{"x", patternBytes(2048)}}));
        const auto before = hashFolder(dir.path());
        for (const QStringList& args :
            {QStringList{dir.path(), "-o", dir.path(), "--data", "x.bin"},
                QStringList{dir.path(), "-o", dir.path(), "--shared-data", "s.bin", "--inline"},
                QStringList{dir.path(), "-o", dir.path(), "--shared-data", "../s.bin"},
                QStringList{dir.path(), "-o", dir.path(), "--shared-data", "s.onnx"},
                QStringList{dir.path(), "-o", dir.path(), "--shared-data", "s.bin", "--models",
                    "missing.onnx"},
                QStringList{dir.filePath("a.onnx"), "-o", dir.filePath("a.onnx"), "--shared-data",
                    "s.bin"}}) {
            const Run run = runRepack(args);
            QVERIFY2(run.status == 2, qPrintable(args.join(' ') + ": " + run.err));
        }
        QCOMPARE(hashFolder(dir.path()), before);
    }
};

QTEST_GUILESS_MAIN(TestFolderSave)
#include "tst_folder_save.moc"
