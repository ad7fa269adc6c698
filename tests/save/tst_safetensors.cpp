// Safetensors data files (core/model/safetensors.h): `repack --format safetensors` writes
// data files that are valid .safetensors files and ONNX external data at once; inspect shows the
// header as a header, verify checks it against the model; files made by other tools load.
// Every output is read back by two independent readers: safetensors_tool.py (json + struct, the
// reference reader's rules) and python3-onnx (interop.py: onnx.checker and values).
#include "core/model/model.h"
#include "core/plan/file_layout.h"
#include "core/plan/save_plan.h"
#include "core/save/save.h"
#include "tests/support/cli_run.h"
#include "tests/support/model_builder.h"
#include "tests/support/python_reader.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace repack;
using namespace fixtures;

namespace {

constexpr uint64_t kMiB = 1 << 20;

// Runs safetensors_tool.py with `args`; its output, or "FAILED: ..." when it fails.
QString tool(const QStringList& args)
{
    QProcess python;
    python.setProcessChannelMode(QProcess::MergedChannels);
    python.start(qEnvironmentVariable("REPACK_PYTHON"),
        QStringList{QStringLiteral(REPACK_SAFETENSORS_TOOL)} + args);
    if (!python.waitForFinished(120000) || python.exitStatus() != QProcess::NormalExit)
        return "FAILED: safetensors_tool.py did not finish";
    const QString out = QString::fromUtf8(python.readAll());
    return python.exitCode() == 0 ? out : "FAILED: " + out;
}

QJsonObject inspectJson(const QString& model)
{
    const auto run = runCli({"inspect", model, "--json"});
    return QJsonDocument::fromJson(run.out).object();
}

// The names safetensors_tool.py check printed ("name X" lines).
QStringList headerNames(const QString& toolOutput)
{
    QStringList names;
    for (const QString& line : toolOutput.split('\n'))
        if (line.startsWith("name "))
            names << line.mid(5);
    return names;
}

// A model with tensors in the main graph, a subgraph (same name "w" as in the main graph), a
// tensor named like the header's metadata key and one named like that key made unique, and one
// of `extraType` when given.
QString writeScopedModel(const QString& dir, std::optional<int32_t> extraType = std::nullopt)
{
    onnx::ModelProto model = emptyModel();
    auto& g = *model.mutable_graph();
    *g.add_initializer() = rawTensor("w", onnx::TensorProto::FLOAT, {64, 32});
    *g.add_initializer() = rawTensor("__metadata__", onnx::TensorProto::INT64, {300});
    *g.add_initializer() = rawTensor("w_2", onnx::TensorProto::UINT8, {3000});
    *g.add_initializer() = rawTensor("__metadata___2", onnx::TensorProto::UINT8, {2000});
    auto& node = addNode(g, "If", "branch");
    auto& then = addSubgraph(node, "then_branch");
    *then.add_initializer() = rawTensor("w", onnx::TensorProto::FLOAT16, {40, 40});
    if (extraType)
        *g.add_initializer() = rawTensor("odd", *extraType, {256});
    const QString path = dir + "/scoped.onnx";
    return saveModel(model, path) ? path : QString();
}

} // namespace

class TestSafetensors : public QObject {
    Q_OBJECT
private slots:
    // Each layout written by the CLI: valid safetensors (the reference reader's rules), the
    // ONNX references at exactly the header's ranges, values equal to the source in onnx.load.
    void repackWritesFilesBothReadersAccept_data()
    {
        QTest::addColumn<QStringList>("options");
        QTest::addColumn<QString>("filePattern"); // every data file's name
        QTest::addColumn<int>("files");
        QTest::addRow("default name") << QStringList{} << "out\\.onnx\\.safetensors" << 1;
        QTest::addRow("named") << QStringList{"--data", "weights.safetensors"}
                               << "weights\\.safetensors" << 1;
        QTest::addRow("sharded") << QStringList{"--shard-size", "1200KiB"}
                                 << "out-0000[1-3]-of-00003\\.onnx\\.safetensors" << 3;
        QTest::addRow("web chunks") << QStringList{"--target", "web", "--shard-size", "1200KiB"}
                                    << "out\\.onnx_data(_[12])?" << 3;
        QTest::addRow("ort target") << QStringList{"--target", "ort"} << "out\\.onnx\\.data" << 1;
        QTest::addRow("threshold")
            << QStringList{"--threshold", "4KiB"} << "out\\.onnx\\.safetensors" << 1;
    }
    void repackWritesFilesBothReadersAccept()
    {
        QFETCH(QStringList, options);
        QFETCH(QString, filePattern);
        QFETCH(int, files);
        QTemporaryDir dir;
        const QString in = writeUint8Model(
            dir.path(), "in.onnx", {3000, kMiB + 7, 5000, kMiB, 600 * 1024, 200}, 4096, "src.data");
        const QString out = dir.path() + "/out.onnx";
        const auto run
            = runCli(QStringList{"repack", in, "-o", out, "--format", "safetensors"} + options);
        QVERIFY2(run.exitCode == 0, run.err.constData());

        const QString checked = tool({"check", out});
        QVERIFY2(!checked.startsWith("FAILED"), qPrintable(checked));
        const QRegularExpression pattern("^" + filePattern + "$");
        int seen = 0;
        for (const QString& line : checked.split('\n'))
            if (line.startsWith("file ")) {
                ++seen;
                QVERIFY2(pattern.match(line.mid(5)).hasMatch(), qPrintable(line));
            }
        QCOMPARE(seen, files);
        const QString failure
            = interopFailure(QStringLiteral(REPACK_INTEROP_SCRIPT), dir.path(), in, out);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));

        // inspect: each file is safetensors, its header a header, nothing orphaned or padded.
        const QJsonArray layout = inspectJson(out)["files"].toArray();
        QCOMPARE(layout.size(), files);
        for (const auto& f : layout) {
            const QJsonObject file = f.toObject();
            QCOMPARE(file["format"].toString(), QString("safetensors"));
            QVERIFY(file["header_bytes"].toInteger() > 8);
            QCOMPARE(file["header_bytes"].toInteger() % 8, 0);
            QCOMPARE(file["orphaned_bytes"].toInteger(), 0);
            QCOMPARE(file["padding_bytes"].toInteger(), 0);
            QCOMPARE(file["referenced_bytes"].toInteger() + file["header_bytes"].toInteger(),
                file["bytes"].toInteger());
        }
        const auto verify = runCli({"verify", out});
        QVERIFY2(verify.exitCode == 0, verify.out.constData());
    }

    // The plan predicts the saved layout to the byte: headers included (what the GUI previews).
    void planPredictsTheSavedOffsets()
    {
        QTemporaryDir dir;
        const QString in = writeUint8Model(
            dir.path(), "in.onnx", {3000, kMiB + 7, 5000, kMiB, 200}, 4096, "src.data");
        auto model = loadModel(in);
        QVERIFY(model);
        SaveOptions options;
        options.format = DataFormat::Safetensors;
        options.shardSize = kMiB + 4096;
        const std::filesystem::path out = (dir.path() + "/out.onnx").toStdString();
        auto plan = planSave(*model, out, options);
        QVERIFY2(plan, plan ? "" : plan.error().message.c_str());
        QCOMPARE(plan->files.size(), plan->fileHeaders.size());
        auto saved = save(*model, out, options);
        QVERIFY2(saved, saved ? "" : saved.error().message.c_str());
        // The saved model itself (what the GUI shows after a save) sees the headers too.
        for (const FileLayout& f : computeLayout(*model, kDefaultAlignment))
            QVERIFY2(f.headerBytes > 0, f.location.c_str());
        auto reloaded = loadModel(QString::fromStdString(out.string()));
        QVERIFY(reloaded);
        for (size_t i = 0; i < reloaded->tensors().size(); ++i) {
            const TensorInfo& t = reloaded->tensors()[i];
            QCOMPARE(t.isExternal(), plan->tensors[i].external);
            if (!t.isExternal())
                continue;
            QCOMPARE(t.external->location(), plan->files[size_t(plan->tensors[i].file)]);
            QCOMPARE(t.external->offset, plan->tensors[i].offset);
        }
        for (const FileLayout& f : computeLayout(*reloaded, kDefaultAlignment)) {
            const auto at = std::find(plan->files.begin(), plan->files.end(), f.location);
            QVERIFY(at != plan->files.end());
            const size_t index = size_t(at - plan->files.begin());
            QCOMPARE(f.bytes, plan->fileBytes[index]);
            QCOMPARE(f.headerBytes, uint64_t(plan->fileHeaders[index].size()));
            QVERIFY(!f.regions.empty());
            QCOMPARE(f.regions.front().type, RegionType::Header);
            QCOMPARE(f.regions.front().length, f.headerBytes);
        }
        QCOMPARE(readAllTensors(*reloaded), readAllTensors(*model));
    }

    // Header names: the main graph's name as it is, a subgraph's under its scope, made unique,
    // never the format's own "__metadata__" key.
    void namesAreScopedAndUnique()
    {
        QTemporaryDir dir;
        const QString in = writeScopedModel(dir.path());
        QVERIFY(!in.isEmpty());
        const QString out = dir.path() + "/out.onnx";
        const auto run = runCli({"repack", in, "-o", out, "--format", "safetensors"});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const QString checked = tool({"check", out});
        QVERIFY2(!checked.startsWith("FAILED"), qPrintable(checked));
        QStringList names = headerNames(checked);
        names.sort();
        QStringList expected{
            "w", "w_2", "__metadata___3", "__metadata___2", "branch/then_branch/w"};
        expected.sort();
        QCOMPARE(names, expected);
        const QString failure
            = interopFailure(QStringLiteral(REPACK_INTEROP_SCRIPT), dir.path(), in, out);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }

    // Mixed element sizes are laid out largest first so every tensor starts at a multiple of its
    // element size (torch views need it). Empty tensors stay inline even when pinned external:
    // onnx.load (1.12) reads a length of 0 as "to the end of the file".
    void emptyTensorsAndMixedElementSizes()
    {
        QTemporaryDir dir;
        onnx::ModelProto model = emptyModel();
        auto& g = *model.mutable_graph();
        *g.add_initializer() = rawTensor("z", onnx::TensorProto::FLOAT, {0});
        *g.add_initializer() = rawTensor("b", onnx::TensorProto::UINT8, {1001});
        *g.add_initializer() = rawTensor("z2", onnx::TensorProto::FLOAT16, {4, 0});
        *g.add_initializer() = rawTensor("h", onnx::TensorProto::FLOAT16, {301});
        *g.add_initializer() = rawTensor("w", onnx::TensorProto::FLOAT, {300});
        *g.add_initializer() = rawTensor("m", onnx::TensorProto::BOOL, {7});
        *g.add_initializer() = rawTensor("d", onnx::TensorProto::DOUBLE, {50});
        const QString in = dir.path() + "/in.onnx";
        QVERIFY(saveModel(model, in));
        auto loaded = loadModel(in);
        QVERIFY(loaded);
        SaveOptions options;
        options.format = DataFormat::Safetensors;
        options.placements.assign(loaded->tensors().size(), TensorPlacement(Placement::External));
        const QString out = dir.path() + "/out.onnx";
        auto saved = save(*loaded, out.toStdString(), options);
        QVERIFY2(saved, saved ? "" : saved.error().message.c_str());
        auto reloaded = loadModel(out);
        QVERIFY(reloaded);
        for (const auto& p : reloaded->problems())
            QVERIFY2(p.severity != Severity::Error, p.message.c_str());
        for (const TensorInfo& t : reloaded->tensors())
            QVERIFY2(t.isExternal() == (t.byteSize() != 0), t.name.c_str());
        QCOMPARE(computeLayout(*reloaded, kDefaultAlignment).front().regions.front().type,
            RegionType::Header);
        const QString checked = tool({"check", out});
        QVERIFY2(!checked.startsWith("FAILED"), qPrintable(checked));
        const QString failure
            = interopFailure(QStringLiteral(REPACK_INTEROP_SCRIPT), dir.path(), in, out);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }

    // A header past the format's 100,000,000 bytes would be refused by every reader: the plan
    // fails before writing, naming the file (a long name of control characters, 6 bytes each).
    void headerPastTheFormatsLimitIsRefused()
    {
        QTemporaryDir dir;
        onnx::ModelProto model = emptyModel();
        *model.mutable_graph()->add_initializer()
            = rawTensor(std::string(17'000'000, '\x01'), onnx::TensorProto::UINT8, {2000});
        const QString in = dir.path() + "/in.onnx";
        QVERIFY(saveModel(model, in));
        auto loaded = loadModel(in);
        QVERIFY(loaded);
        SaveOptions options;
        options.format = DataFormat::Safetensors;
        auto plan = planSave(*loaded, (dir.path() + "/out.onnx").toStdString(), options);
        QVERIFY(!plan);
        QVERIFY2(plan.error().message.find("out.onnx.safetensors") != std::string::npos,
            plan.error().message.c_str());
        QVERIFY2(plan.error().message.find("100000000") != std::string::npos,
            plan.error().message.c_str());
    }

    // What the format cannot hold is refused before anything is written, naming why.
    void refusedBeforeWriting_data()
    {
        QTest::addColumn<QStringList>("options");
        QTest::addColumn<int>("extraType"); // 0: none
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        QTest::addRow("align") << QStringList{"--align", "64KiB"} << 0 << 2 << "back to back";
        QTest::addRow("dedupe") << QStringList{"--dedupe"} << 0 << 2 << "--dedupe";
        QTest::addRow("complex64") << QStringList{} << int(onnx::TensorProto::COMPLEX64) << 2
                                   << "graph/odd: complex64 has no safetensors dtype";
        QTest::addRow("inline") << QStringList{"--inline"} << 0 << 2 << "--format";
    }
    void refusedBeforeWriting()
    {
        QFETCH(QStringList, options);
        QFETCH(int, extraType);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const QString in
            = extraType ? writeScopedModel(dir.path(), extraType) : writeScopedModel(dir.path());
        const auto before = hashFolder(dir.path());
        const auto run = runCli(
            QStringList{"repack", in, "-o", dir.path() + "/out.onnx", "--format", "safetensors"}
            + options);
        QCOMPARE(run.exitCode, exitCode);
        QVERIFY2(run.err.contains(message.toUtf8()), run.err.constData());
        QCOMPARE(hashFolder(dir.path()), before);
    }

    // A target's alignment cannot be kept in a safetensors file; the save goes on (the names and
    // limits still apply) but says so instead of dropping it silently. An explicit --align
    // stays a usage error (refusedBeforeWriting); without a target nothing is said.
    void targetAlignmentDroppedIsSaid_data()
    {
        QTest::addColumn<QStringList>("options");
        QTest::addColumn<QString>("note"); // empty: no note
        QTest::addRow("ort") << QStringList{"--target", "ort"}
                             << "--target ort aligns tensors of 1MiB and more to 64KiB";
        QTest::addRow("web") << QStringList{"--target", "web"}
                             << "--target web aligns tensors of 1MiB and more to 4KiB";
        QTest::addRow("ort, --align 0") << QStringList{"--target", "ort", "--align", "0"} << "";
        QTest::addRow("no target") << QStringList{} << "";
    }
    void targetAlignmentDroppedIsSaid()
    {
        QFETCH(QStringList, options);
        QFETCH(QString, note);
        QTemporaryDir dir;
        const QString in = writeScopedModel(dir.path());
        const auto run = runCli(
            QStringList{"repack", in, "-o", dir.path() + "/out.onnx", "--format", "safetensors"}
            + options);
        QVERIFY2(run.exitCode == 0, run.err.constData());
        if (note.isEmpty()) {
            QVERIFY2(!run.err.contains("aligns"), run.err.constData());
        } else {
            QVERIFY2(run.err.contains(note.toUtf8()), run.err.constData());
            QVERIFY2(run.err.contains("back to back"), run.err.constData());
        }
        const QString checked = tool({"check", dir.path() + "/out.onnx"});
        QVERIFY2(!checked.startsWith("FAILED"), qPrintable(checked));
    }

    // A model another tool pointed into its own .safetensors file (own names, metadata, a
    // padded header, empty entries sharing the next tensor's offset, which once hid it): inspect
    // shows the header, verify agrees, a repack keeps every value.
    void readsFilesMadeByOtherTools()
    {
        QTemporaryDir dir;
        const QString made = tool({"make", dir.path()});
        QVERIFY2(!made.startsWith("FAILED"), qPrintable(made));
        const QString model = dir.path() + "/model.onnx";
        const auto verify = runCli({"verify", model});
        QVERIFY2(verify.exitCode == 0, verify.out.constData());
        const QJsonObject inspected = inspectJson(model);
        const QJsonObject file = inspected["files"].toArray().first().toObject();
        QCOMPARE(file["location"].toString(), QString("weights.safetensors"));
        QCOMPARE(file["format"].toString(), QString("safetensors"));
        QCOMPARE(file["orphaned_bytes"].toInteger(), 0);
        QCOMPARE(file["referenced_bytes"].toInteger() + file["header_bytes"].toInteger(),
            file["bytes"].toInteger());
        const auto text = runCli({"inspect", model});
        QVERIFY2(text.out.contains("weights.safetensors (safetensors)"), text.out.constData());

        // Into a raw data file and back into safetensors: the values never change.
        const QString raw = dir.path() + "/raw.onnx";
        QCOMPARE(runCli({"repack", model, "-o", raw}).exitCode, 0);
        QCOMPARE(inspectJson(raw)["files"].toArray().first().toObject()["format"].toString(),
            QString("raw"));
        const QString again = dir.path() + "/again.onnx";
        QCOMPARE(runCli({"repack", raw, "-o", again, "--format", "safetensors"}).exitCode, 0);
        const QString checked = tool({"check", again});
        QVERIFY2(!checked.startsWith("FAILED"), qPrintable(checked));
        QString failure
            = interopFailure(QStringLiteral(REPACK_INTEROP_SCRIPT), dir.path(), model, raw);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
        failure = interopFailure(QStringLiteral(REPACK_INTEROP_SCRIPT), dir.path(), model, again);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }

    // A reference that disagrees with the header (same bytes, another dtype and shape) is an
    // error naming the file and the tensor; it does not keep the model from being repacked.
    void verifyReportsReferencesThatDisagreeWithTheHeader()
    {
        QTemporaryDir dir;
        const QString made = tool({"make", dir.path(), "--mismatch"});
        QVERIFY2(!made.startsWith("FAILED"), qPrintable(made));
        const QString model = dir.path() + "/model.onnx";
        const auto verify = runCli({"verify", model});
        QCOMPARE(verify.exitCode, 1);
        const QByteArray said = verify.out + verify.err;
        QVERIFY2(said.contains("safetensors-mismatch"), said.constData());
        QVERIFY2(said.contains("graph/decoder_proj_weight"), said.constData());
        QVERIFY2(said.contains("weights.safetensors"), said.constData());
        QVERIFY2(said.contains("says F32, the model says float16"), said.constData());
        QCOMPARE(runCli({"verify", model, "--json"}).exitCode, 1);

        const QString fixed = dir.path() + "/fixed.onnx";
        const auto repack = runCli({"repack", model, "-o", fixed, "--format", "safetensors"});
        QVERIFY2(repack.exitCode == 0, repack.err.constData());
        QCOMPARE(runCli({"verify", fixed}).exitCode, 0);
        const QString checked = tool({"check", fixed});
        QVERIFY2(!checked.startsWith("FAILED"), qPrintable(checked));
    }

    // A raw data file whose first bytes happen to read as a header length and '{' stays raw.
    void rawDataThatLooksLikeAHeaderStaysRaw()
    {
        QTemporaryDir dir;
        onnx::ModelProto model = emptyModel();
        // Bytes 0..7: the length 2, then "{}" -- but the tensor starts at 0, inside it.
        std::string bytes("\x02\0\0\0\0\0\0\0{}", 10);
        bytes += std::string(4096 - bytes.size(), 'x');
        auto t = rawTensor("w", onnx::TensorProto::UINT8, {4096}, std::string());
        t.clear_raw_data();
        setExternal(t, "w.bin", "0", "4096");
        *model.mutable_graph()->add_initializer() = t;
        QVERIFY(saveModel(model, dir.path() + "/m.onnx"));
        QFile data(dir.path() + "/w.bin");
        QVERIFY(data.open(QIODevice::WriteOnly));
        data.write(bytes.data(), qint64(bytes.size()));
        data.close();
        auto loaded = loadModel(dir.path() + "/m.onnx");
        QVERIFY(loaded);
        QVERIFY(!loaded->hasErrors());
        const auto layout = computeLayout(*loaded, kDefaultAlignment);
        QCOMPARE(layout.size(), size_t(1));
        QCOMPARE(layout.front().headerBytes, uint64_t(0));
        QCOMPARE(layout.front().referencedBytes, uint64_t(4096));
    }

    // A file that starts like safetensors (length, '{') before every tensor, but whose header is
    // not valid: a warning naming the file; the tensors still read.
    void malformedHeaderIsAWarning()
    {
        QTemporaryDir dir;
        const QString made = tool({"make", dir.path()});
        QVERIFY2(!made.startsWith("FAILED"), qPrintable(made));
        QFile data(dir.path() + "/weights.safetensors");
        QVERIFY(data.open(QIODevice::ReadWrite));
        QVERIFY(data.seek(9));
        data.write("!"); // the header's second byte: no longer JSON
        data.close();
        const auto verify = runCli({"verify", dir.path() + "/model.onnx"});
        QVERIFY2(verify.exitCode == 0, verify.out.constData());
        const auto inspect = runCli({"inspect", dir.path() + "/model.onnx"});
        QVERIFY2(inspect.out.contains("safetensors-header"), inspect.out.constData());
        QVERIFY2(inspect.out.contains("weights.safetensors"), inspect.out.constData());
        auto loaded = loadModel(dir.path() + "/model.onnx");
        QVERIFY(loaded);
        for (const auto& [name, bytes] : readAllTensors(*loaded))
            QVERIFY2(!QByteArray::fromStdString(bytes).startsWith("<error"), name.c_str());
    }

    // Headers are read entry by entry (a hostile 80 MB header took 1.2 GB as one JSON document):
    // a header of many entries still gives every range, and one that names an entry twice
    // (which a document silently reduced to the last) is refused with that name.
    void headerIsReadEntryByEntry_data()
    {
        QTest::addColumn<int>("empties"); // zero-length entries before the tensor's
        QTest::addColumn<bool>("duplicate");
        QTest::addRow("20,000 entries") << 20000 << false;
        QTest::addRow("an entry named twice") << 3 << true;
    }
    void headerIsReadEntryByEntry()
    {
        QFETCH(int, empties);
        QFETCH(bool, duplicate);
        QTemporaryDir dir;
        std::string text = "{";
        for (int i = 0; i < empties; ++i)
            text += "\"e" + std::to_string(duplicate ? 0 : i)
                + "\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]},";
        text += "\"w\":{\"dtype\":\"U8\",\"shape\":[16],\"data_offsets\":[0,16]}}";
        text.append((8 - (8 + text.size()) % 8) % 8, ' ');
        std::string file(8, '\0');
        for (size_t i = 0; i < 8; ++i)
            file[i] = char((uint64_t(text.size()) >> (8 * i)) & 0xff);
        const std::string weights = patternBytes(16);
        file += text + weights;
        QFile data(dir.filePath("w.safetensors"));
        QVERIFY(data.open(QIODevice::WriteOnly));
        data.write(file.data(), qint64(file.size()));
        data.close();
        onnx::ModelProto model = emptyModel();
        onnx::TensorProto* w = model.mutable_graph()->add_initializer();
        *w = rawTensor("w", onnx::TensorProto::UINT8, {16}, weights);
        w->clear_raw_data();
        setExternal(*w, "w.safetensors", std::to_string(8 + text.size()), "16");
        QVERIFY(saveModel(model, dir.filePath("m.onnx")));

        auto loaded = loadModel(dir.filePath("m.onnx"));
        QVERIFY(loaded);
        QCOMPARE(readAllTensors(*loaded)["graph/w"], weights);
        const auto layout = computeLayout(*loaded, kDefaultAlignment);
        QCOMPARE(layout.size(), size_t(1));
        QCOMPARE(layout.front().headerBytes, duplicate ? uint64_t(0) : uint64_t(8 + text.size()));
        const auto inspect = runCli({"inspect", dir.filePath("m.onnx")});
        QCOMPARE(inspect.out.contains("safetensors-header"), duplicate);
        if (duplicate)
            QVERIFY2(inspect.out.contains("entry 'e0' appears twice"), inspect.out.constData());
    }
};

QTEST_GUILESS_MAIN(TestSafetensors)
#include "tst_safetensors.moc"
