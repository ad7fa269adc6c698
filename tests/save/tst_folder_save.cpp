// A folder of graphs saved as one unit (SPEC 9, `repack DIR -o OUT --shared-data NAME`): each
// distinct content once in one shared data file, every graph's values intact for python3-onnx,
// never merging other dtypes or bytes under one name, a re-run that writes nothing, siblings
// outside the set asked about and their files kept, and a kill at every step of the protocol
// leaving every graph loadable with its values.
#include "core/file_names.h"
#include "core/inspect/folder_inspect.h"
#include "core/inspect/readers.h"
#include "core/model/model.h"
#include "core/save/folder_save.h"
#include "tests/support/cli_run.h"
#include "tests/support/folder_fixtures.h"
#include "tests/support/graph_readers.h"
#include "tests/support/model_builder.h"
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

#include <algorithm>
#include <cstring>
#include <iterator>
#include <sys/stat.h>
#include <unistd.h>

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
    // What the models of `dir` read, as "model reads path (N links)" lines: the data files with
    // more than one link (`temporaries` false), or the save temporaries they name (true).
    static QString readFiles(const QString& dir, bool temporaries)
    {
        QString out;
        for (const QString& name : QDir(dir).entryList({"*.onnx"}, QDir::Files)) {
            auto model = Model::load(QDir(dir).filePath(name).toStdString());
            if (!model)
                return name + " does not load: " + QString::fromStdString(model.error().message);
            for (const auto& path : filesReadBy(**model)) {
                struct stat st { };
                const bool stated = ::stat(path.c_str(), &st) == 0;
                if (temporaries ? isTempName(path.filename().string())
                                : !stated || st.st_nlink != 1)
                    out += name + " reads " + QString::fromStdString(path.string()) + " ("
                        + QString::number(stated ? st.st_nlink : 0) + " links)\n";
            }
        }
        return out;
    }

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

    // Issue 36: graphs that already share one data file (saved so before) name it as their
    // shared file, and saving them with it again writes nothing: the shared file and every
    // model keep their inode and mtime.
    void aFileTheGraphsAlreadyShareIsKept()
    {
        QTemporaryDir dir;
        const Export e = optimumExport();
        QVERIFY(writeExport(dir.path(), e));
        const std::string path = dir.path().toStdString();
        FolderSaveOptions options;
        options.sharedData = "weights.bin";
        auto saved = saveFolder(path, path, options);
        QVERIFY2(saved.ok(), saved ? "" : saved.error().message.c_str());
        QVERIFY(!saved->unchanged);

        auto folder = inspectFolder(path);
        QVERIFY(folder);
        QCOMPARE(sharedDataFileOf(*folder), std::string("weights.bin"));
        const QStringList before = fileStamps(dir.path());
        QVERIFY(before.join(u'\n').contains("weights.bin inode"));
        auto again = saveFolder(path, path, options);
        QVERIFY2(again.ok(), again ? "" : again.error().message.c_str());
        QVERIFY(again->unchanged);
        QCOMPARE(fileStamps(dir.path()), before);
        QVERIFY(valuesIntact(dir.path(), e, "saved again with the file they share"));

        // Each graph reading its own file shares none.
        QTemporaryDir own;
        QVERIFY(writeExport(own.path(), e));
        auto separate = inspectFolder(own.path().toStdString());
        QVERIFY(separate);
        QCOMPARE(sharedDataFileOf(*separate), std::string());
    }

    // Issue 36: the byte comparison that confirms identical contents is the first phase of a
    // shared save, reported through its progress callback before the shared file is written.
    void theByteComparisonReportsProgress()
    {
        QTemporaryDir dir;
        const Export e = optimumExport();
        QVERIFY(writeExport(dir.path(), e));
        struct Report {
            std::string phase;
            uint64_t done = 0;
            uint64_t total = 0;
        };
        std::vector<Report> reports;
        FolderSaveOptions options;
        options.sharedData = "shared.onnx_data";
        options.controls.progress = [&reports](const Progress& p) {
            reports.push_back({std::string(p.phase), p.bytesDone, p.bytesTotal});
        };
        const std::string path = dir.path().toStdString();
        auto saved = saveFolder(path, path, options);
        QVERIFY2(saved.ok(), saved ? "" : saved.error().message.c_str());
        const auto firstWrite = std::find_if(reports.begin(), reports.end(),
            [](const Report& r) { return r.phase == kPhaseWriting; });
        QVERIFY(firstWrite != reports.end());
        QVERIFY(firstWrite != reports.begin()); // the comparison reported first
        const Report& compared = *std::prev(firstWrite);
        QCOMPARE(compared.phase, std::string(kPhaseComparing));
        QVERIFY2(compared.done > 0 && compared.done <= compared.total,
            qPrintable(QStringLiteral("%1 of %2").arg(compared.done).arg(compared.total)));
        for (auto r = reports.begin(); r != firstWrite; ++r)
            QCOMPARE(r->phase, std::string(kPhaseComparing));
        QCOMPARE(reports.back().phase, std::string(kPhaseWriting));
        QCOMPARE(reports.back().done, uint64_t(e.distinctBytes));
        QCOMPARE(reports.back().total, uint64_t(e.distinctBytes));
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
        // `clean` finishes what the kill left (issue 35, 4): no data file a graph reads has a
        // second link (onnx >= 1.21 and onnx_ir refuse those), every graph names final files,
        // and no temporary is left. One state keeps a temporary name: a re-save killed after
        // its first graph's commit, where the other graphs still read the old shared file, so
        // the new one cannot take its name (every reader accepts the temporary: one link).
        const Run cleaned = runCliInShell(dir.path(), "clean", {dir.path()});
        QVERIFY2(cleaned.status == 0, cleaned.err.constData());
        QVERIFY(valuesIntact(dir.path(), e, "cleaned after the kill at " + point));
        const QString links = readFiles(dir.path(), false);
        QVERIFY2(links.isEmpty(), qPrintable(links));
        const QString named = readFiles(dir.path(), true);
        if (resave && point == "model-temp-committed") {
            QVERIFY2(cleaned.err.contains("keeps its temporary name"), cleaned.err.constData());
            QCOMPARE(saveTempsIn(dir.path()).size(), 1); // the one the decoder names
        } else {
            QVERIFY2(named.isEmpty(), qPrintable(named));
            QCOMPARE(saveTempsIn(dir.path()), QStringList());
        }
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
        options.controls.cancel = &token;
        options.controls.progress = [&](const Progress&) {
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
        options.controls.progress = {};
        options.controls.cancel = nullptr;
        options.controls.force = true; // the first graph wrote its data file there already
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

    // Issue 35, 1: a.onnx and c.onnx both read weights/w.bin; saving a alone into a shared file
    // must not remove it (the removal looked for readers beside the file only).
    void aDataFileInASubfolderReadByAnotherModelStays()
    {
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath("weights"));
        const std::vector<Weight> weights{{"embed", patternBytes(4096, 11)}};
        QVERIFY(writeGraph(dir.path(), "a.onnx", "weights/w.bin", weights));
        QVERIFY(writeGraph(dir.path(), "c.onnx", "weights/w.bin", weights));
        const Run run = runRepack(
            {dir.path(), "-o", dir.path(), "--shared-data", "s.data", "--models", "a.onnx"});
        QVERIFY2(run.status == 0, run.err.constData());
        QVERIFY2(!run.out.contains("removed"), run.out.constData());
        QVERIFY(QFile::exists(dir.filePath("weights/w.bin")));
        Export e;
        e.graphs["a.onnx"] = weights;
        e.graphs["c.onnx"] = weights;
        QVERIFY(valuesIntact(dir.path(), e, "after saving a alone"));
        const Run verified = runCliInShell(dir.path(), "verify", {dir.filePath("c.onnx")});
        QVERIFY2(verified.status == 0, verified.err.constData());
    }

    // Issue 35, 2: a reads sub/s.data at 0, c at 4096; a folder save of a alone that rewrites
    // sub/s.data would leave c reading past its end: consent, naming c, nothing written. The
    // same for the external-data operations (tst_external_ops).
    void aSharedFileInASubfolderNeedsConsent()
    {
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath("sub"));
        const std::string embed = patternBytes(4096, 12);
        QVERIFY(writeGraph(dir.path(), "a.onnx", "sub/s.data", {{"embed", embed}}));
        QVERIFY(writeGraph(dir.path(), "c.onnx", "sub/s.data",
            {{"embed", embed}, {"own", patternBytes(2048, 13)}}));
        const auto before = hashFolder(dir.path());
        const auto beforeSub = hashFolder(dir.filePath("sub"));
        const Run refused = runRepack({dir.path(), "-o", dir.path(), "--shared-data", "sub/s.data",
            "--models", "a.onnx", "--rewrite"});
        QCOMPARE(refused.status, 3);
        QVERIFY2(refused.err.contains("c.onnx reads it"), refused.err.constData());
        QCOMPARE(hashFolder(dir.path()), before);
        QCOMPARE(hashFolder(dir.filePath("sub")), beforeSub);
        // The plan says so too, writing nothing.
        const QJsonObject doc = QJsonDocument::fromJson(
            runCliInShell(dir.path(), "plan",
                {dir.path(), "--shared-data", "sub/s.data", "--models", "a.onnx", "--json"})
                .out)
                                    .object();
        QVERIFY2(doc["consent_needed"].toString().contains("c.onnx"),
            qPrintable(QJsonDocument(doc).toJson()));
    }

    // Issue 35, 3: a shared data name that leads to a folder or to a graph's own model file is
    // refused before anything is written, --force or not.
    void aSharedNameThatAliasesIsRefused_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addRow("a folder") << "folder";
        QTest::addRow("a symlink to a folder") << "symlink-folder";
        QTest::addRow("a symlink to a graph's model") << "symlink-model";
        QTest::addRow("a hard link to a graph's model") << "hardlink-model";
    }
    void aSharedNameThatAliasesIsRefused()
    {
        QFETCH(QString, kind);
        QTemporaryDir dir;
        QVERIFY(writeGraph(dir.path(), "a.onnx", "a.bin", {{"x", patternBytes(2048, 14)}}));
        QVERIFY(writeGraph(dir.path(), "b.onnx", "b.bin", {{"y", patternBytes(2048, 15)}}));
        const QString name = dir.filePath("s.data");
        if (kind == "folder")
            QVERIFY(QDir(dir.path()).mkdir("s.data"));
        if (kind == "symlink-folder") {
            QVERIFY(QDir(dir.path()).mkdir("elsewhere"));
            QVERIFY(QFile::link(dir.filePath("elsewhere"), name));
        }
        if (kind == "symlink-model")
            QVERIFY(QFile::link(dir.filePath("b.onnx"), name));
        if (kind == "hardlink-model")
            QVERIFY(::link(qPrintable(dir.filePath("b.onnx")), qPrintable(name)) == 0);
        const auto before = hashFolder(dir.path());
        const Run refused
            = runRepack({dir.path(), "-o", dir.path(), "--shared-data", "s.data", "--force"});
        QCOMPARE(refused.status, 2);
        QVERIFY2(refused.err.contains("s.data"), refused.err.constData());
        QCOMPARE(hashFolder(dir.path()), before);
        QCOMPARE(saveTempsIn(dir.path()), QStringList());
    }

    // Issue 35, 5: a graph whose shape input is stored externally (python-onnx's re-save at a
    // low threshold; ONNX Runtime refuses it) is fixed by the folder save as by the single
    // save: that tensor comes back inline, the rest goes into the shared file.
    void shapeInputsStoredExternallyComeBackInline()
    {
        QTemporaryDir dir;
        onnx::ModelProto model = emptyModel();
        auto& g = *model.mutable_graph();
        auto* x = g.add_input();
        x->set_name("x");
        x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
        for (int64_t d : {2, 3})
            x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
        auto* y = g.add_output();
        y->set_name("y");
        y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
        std::string shape(16, '\0');
        const int64_t dims[2] = {3, 2};
        std::memcpy(shape.data(), dims, 16);
        const std::string w = patternBytes(2 * 512 * 4, 16);
        onnx::TensorProto shapeTensor = rawTensor("shape", onnx::TensorProto::INT64, {2}, shape);
        shapeTensor.clear_raw_data();
        setExternal(shapeTensor, "m.onnx.data", "0", "16");
        onnx::TensorProto wTensor = rawTensor("w", onnx::TensorProto::FLOAT, {2, 512}, w);
        wTensor.clear_raw_data();
        setExternal(wTensor, "m.onnx.data", "16", std::to_string(w.size()));
        *g.add_initializer() = shapeTensor;
        *g.add_initializer() = wTensor;
        onnx::NodeProto& reshape = addNode(g, "Reshape", "r");
        reshape.add_input("x");
        reshape.add_input("shape");
        reshape.add_output("r_out");
        onnx::NodeProto& matmul = addNode(g, "MatMul", "m");
        matmul.add_input("r_out");
        matmul.add_input("w");
        matmul.add_output("y");
        QFile data(dir.filePath("m.onnx.data"));
        QVERIFY(data.open(QIODevice::WriteOnly));
        data.write(QByteArray::fromStdString(shape + w));
        data.close();
        QVERIFY(saveModel(model, dir.filePath("m.onnx")));

        const Run run = runRepack({dir.path(), "-o", dir.path(), "--shared-data", "s.data"});
        QVERIFY2(run.status == 0, run.err.constData());
        auto saved = Model::load(dir.filePath("m.onnx").toStdString());
        QVERIFY(saved);
        for (const TensorInfo& t : (*saved)->tensors())
            QCOMPARE(t.isExternal(), t.name == "w");
        QCOMPARE(QFileInfo(dir.filePath("s.data")).size(), qint64(w.size()));
        const QString ort = onnxRuntimeFailure({dir.filePath("m.onnx")});
        QVERIFY2(ort.isEmpty(), qPrintable(ort));
    }

    // Issue 35: what one shared file cannot honour is refused by the core, for every front end.
    void aLayoutTheSharedFileCannotHonourIsRefused_data()
    {
        QTest::addColumn<int>("option");
        QTest::addRow("safetensors") << 0;
        QTest::addRow("every tensor inline") << 1;
        QTest::addRow("shards") << 2;
        QTest::addRow("placements") << 3;
        QTest::addRow("keeping placement") << 4;
        QTest::addRow("another data file") << 5;
    }
    void aLayoutTheSharedFileCannotHonourIsRefused()
    {
        QFETCH(int, option);
        QTemporaryDir dir;
        QVERIFY(writeGraph(dir.path(), "a.onnx", "a.bin", {{"x", patternBytes(2048, 17)}}));
        const auto before = hashFolder(dir.path());
        FolderSaveOptions options;
        options.sharedData = "s.data";
        switch (option) {
        case 0:
            options.layout.format = DataFormat::Safetensors;
            break;
        case 1:
            options.layout.allInline = true;
            break;
        case 2:
            options.layout.shardSize = 1024;
            break;
        case 3:
            options.layout.placements = {TensorPlacement(Placement::Inline)};
            break;
        case 4:
            options.layout.keepPlacement = true;
            break;
        case 5:
            options.layout.dataFile = "other.bin";
            break;
        }
        const auto saved = saveFolder(dir.path().toStdString(), dir.path().toStdString(), options);
        QVERIFY(!saved.ok());
        QCOMPARE(saved.error().kind, ErrorKind::Usage);
        QVERIFY2(saved.error().message.find("cannot take") != std::string::npos,
            saved.error().message.c_str());
        QCOMPARE(hashFolder(dir.path()), before);
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
