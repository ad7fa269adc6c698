// The onnx-repack executable as users run it ($REPACK_CLI): exit codes 0/1/2, one-line
// reasons on stderr naming the file, `inspect --json` following SPEC section 6, `verify --json`
// also for models it cannot read, text output that names from a model cannot break, --timeout
// checked, waits said once each, and `clean` of a folder a stopped save left without a model.
#include "tests/support/cli_run.h"
#include "tests/support/data_file_builder.h"
#include "tests/support/model_builder.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"

#include "cli/command_token.h"
#include "cli/terminal_text.h"
#include "core/save_lock.h"

#include <algorithm>
#include <sstream>

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

using namespace fixtures;

namespace {

using Run = fixtures::CliRun;
using fixtures::runCli;

// A file holding `contents` at `path`; a null `contents` creates no file.
bool writeFile(const QString& path, const QByteArray& contents)
{
    if (contents.isNull())
        return true;
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(contents) == contents.size();
}

// A protobuf varint / length-delimited field, for models written at the wire level.
QByteArray varint(uint64_t n)
{
    QByteArray out;
    for (; n >= 0x80; n >>= 7)
        out.append(static_cast<char>((n & 0x7f) | 0x80));
    return out.append(static_cast<char>(n));
}
QByteArray field(int number, const QByteArray& payload)
{
    return varint(static_cast<uint64_t>(number) << 3 | 2) + varint(payload.size()) + payload;
}

// A 12 MB model of `count` unnamed one-element float initializers: its index alone needs more
// memory than a small address-space limit allows.
QByteArray manyTinyTensors(int count)
{
    const QByteArray tensor
        = QByteArray("\x08\x01\x10\x01", 4) + field(9, QByteArray(4, '\0')); // dims [1], FLOAT
    const QByteArray graph = field(2, "g") + field(5, tensor).repeated(count);
    return QByteArray("\x08\x08", 2) + field(7, graph) + field(8, QByteArray("\x10\x11", 2));
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void usageError_data();
    void usageError();
    void unusableFile_data();
    void unusableFile();
    void inspectJsonSchema();
    void aTensorPinnedOutLeavesOrphanedBytesNotPadding();
    void inspectCountsGapsAgainstTheAlignmentTheFilesWereWrittenWith();
    void verifyReportsEveryProblem();
    void verifyHealthyModel();
    void verifyJsonOfUnreadableModel_data();
    void verifyJsonOfUnreadableModel();
    void controlCharactersEscapedInText();
    void wideNamesKeepColumnsAligned();
    void terminalTextHelpers();
    void emptyFileSaysSo_data();
    void emptyFileSaysSo();
    void outOfMemoryIsAnErrorNamingTheFile_data();
    void outOfMemoryIsAnErrorNamingTheFile();
    void aTimeoutThatIsNoNumberOfSecondsIsAUsageError_data();
    void aTimeoutThatIsNoNumberOfSecondsIsAUsageError();
    void eachWaitIsSaidOnce();
    void cleanRemovesOnlyTheLeftoversOfAFolderWithoutAModel();
    void cleanKeepsATemporaryAModelAboveNames();
    void cleanRemovesNothingWhileASaveHoldsTheFolder();

private:
    QTemporaryDir m_dir;
    QString m_model; // healthy: inline, two aligned externals, one unknown-key warning
    QString m_broken; // two errors: missing data file, checksum mismatch
};

void TestCli::initTestCase()
{
    QVERIFY2(QFileInfo(qEnvironmentVariable("REPACK_CLI")).isExecutable(),
        "REPACK_CLI must name the onnx-repack binary");
    QVERIFY(m_dir.isValid());

    onnx::ModelProto model = emptyModel();
    DataFileBuilder data("m.onnx.data");
    *model.mutable_graph()->add_initializer() = rawTensor("w_inline", 1, {2, 2});
    auto ext = rawTensor("w_ext", 1, {4});
    data.append(ext, 4096);
    auto ext2 = rawTensor("w_ext2", 1, {2, 2});
    data.append(ext2, 4096); // offset 4096: 4080 bytes of zero padding before it
    addExternalKey(ext2, "compression", "none");
    *model.mutable_graph()->add_initializer() = ext;
    *model.mutable_graph()->add_initializer() = ext2;
    QVERIFY(data.save(m_dir.path()));
    m_model = m_dir.filePath("m.onnx");
    QVERIFY(saveModel(model, m_model));

    onnx::ModelProto broken = emptyModel();
    DataFileBuilder brokenData("b.onnx.data");
    auto gone = rawTensor("gone", 1, {4});
    brokenData.append(gone);
    setExternal(gone, "nowhere.bin", "0", "16");
    auto bad = rawTensor("bad", 1, {4});
    brokenData.append(bad);
    addExternalKey(bad, "checksum", std::string(40, '0'));
    *broken.mutable_graph()->add_initializer() = gone;
    *broken.mutable_graph()->add_initializer() = bad;
    QVERIFY(brokenData.save(m_dir.path()));
    m_broken = m_dir.filePath("b.onnx");
    QVERIFY(saveModel(broken, m_broken));
}

void TestCli::usageError_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::newRow("no subcommand") << QStringList{};
    QTest::newRow("unknown subcommand") << QStringList{"frobnicate"};
    QTest::newRow("inspect without MODEL") << QStringList{"inspect"};
    QTest::newRow("unknown option") << QStringList{"inspect", "x.onnx", "--bogus"};
    QTest::newRow("verify with two models") << QStringList{"verify", "a.onnx", "b.onnx"};
}

void TestCli::usageError()
{
    QFETCH(QStringList, args);
    const Run run = runCli(args);
    QCOMPARE(run.exitCode, 2);
    QVERIFY(run.out.isEmpty());
    const QStringList lines = run.errLines();
    QVERIFY2(!lines.isEmpty() && lines.size() <= 3, run.err.constData());
    QVERIFY2(run.err.contains("usage"), run.err.constData());
}

void TestCli::unusableFile_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<QString>("file"); // under the temporary dir
    QTest::addColumn<QByteArray>("contents"); // null: the file is not created

    const QByteArray text = "this is a README, not an ONNX model\n";
    QTest::newRow("inspect missing file") << "inspect"
                                          << "missing.onnx" << QByteArray();
    QTest::newRow("verify missing file") << "verify"
                                         << "missing.onnx" << QByteArray();
    QTest::newRow("inspect text file") << "inspect"
                                       << "README.onnx" << text;
    QTest::newRow("verify text file") << "verify"
                                      << "README.onnx" << text;
    QTest::newRow("inspect binary junk") << "inspect"
                                         << "junk.onnx" << QByteArray(64, '\xff');
}

void TestCli::unusableFile()
{
    QFETCH(QString, command);
    QFETCH(QString, file);
    QFETCH(QByteArray, contents);

    QTemporaryDir dir;
    const QString path = dir.filePath(file);
    QVERIFY(writeFile(path, contents));
    const Run run = runCli({command, path});
    QCOMPARE(run.exitCode, 1);
    const QStringList lines = run.errLines();
    QCOMPARE(lines.size(), 1);
    QVERIFY2(lines[0].contains(path), run.err.constData());
}

void TestCli::inspectJsonSchema()
{
    const Run run = runCli({"inspect", m_model, "--json"});
    QCOMPARE(run.exitCode, 0);
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(run.out, &error);
    QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
    const QJsonObject root = doc.object();
    QCOMPARE(root.keys().size(), 6);
    QCOMPARE(root["schema"].toString(), QString("onnx-repack/inspect/1"));

    const QJsonObject model = root["model"].toObject();
    for (const char* key : {"path", "bytes", "ir_version", "producer", "opsets"})
        QVERIFY2(model.contains(key), key);
    QVERIFY(model["path"].toString().endsWith("/m.onnx"));
    QCOMPARE(model["bytes"].toInteger(), QFileInfo(m_model).size());
    QCOMPARE(model["ir_version"].toInteger(), 8);
    QCOMPARE(model["producer"].toString(), QString("repack-fixtures 1"));
    QCOMPARE(model["opsets"].toObject()["ai.onnx"].toInteger(), 17);

    const QJsonArray tensors = root["tensors"].toArray();
    QCOMPARE(tensors.size(), 3);
    const QStringList names{"w_inline", "w_ext", "w_ext2"};
    const QList<qint64> offsets{-1, 0, 4096};
    for (int i = 0; i < 3; ++i) {
        const QJsonObject t = tensors[i].toObject();
        for (const char* key : {"name", "scope", "kind", "dtype", "shape", "elements", "bytes",
                 "storage", "location", "offset", "length"})
            QVERIFY2(t.contains(key), key);
        QCOMPARE(t["name"].toString(), names[i]);
        QCOMPARE(t["scope"].toString(), QString("graph"));
        QCOMPARE(t["kind"].toString(), QString("initializer"));
        QCOMPARE(t["dtype"].toString(), QString("float"));
        QVERIFY(t["shape"].isArray());
        QCOMPARE(t["elements"].toInteger(), 4);
        QCOMPARE(t["bytes"].toInteger(), 16);
        const bool external = i > 0;
        QCOMPARE(t["storage"].toString(), QString(external ? "external" : "inline"));
        if (external) {
            QCOMPARE(t["location"].toString(), QString("m.onnx.data"));
            QCOMPARE(t["offset"].toInteger(), offsets[i]);
            QCOMPARE(t["length"].toInteger(), 16);
        } else {
            QVERIFY(t["location"].isNull() && t["offset"].isNull() && t["length"].isNull());
        }
    }
    QCOMPARE(tensors[0].toObject()["shape"].toArray(), (QJsonArray{2, 2}));

    const QJsonArray files = root["files"].toArray();
    QCOMPARE(files.size(), 1);
    const QJsonObject f = files[0].toObject();
    QCOMPARE(f["location"].toString(), QString("m.onnx.data"));
    QCOMPARE(f["bytes"].toInteger(), 4096 + 16);
    QCOMPARE(f["referenced_bytes"].toInteger(), 32);
    QCOMPARE(f["padding_bytes"].toInteger(), 4096 - 16);
    QCOMPARE(f["orphaned_bytes"].toInteger(), 0);
    QCOMPARE(f["alignment"].toInteger(), 4096); // what the padding was counted against
    QCOMPARE(f["alignment_from"].toString(), QString("option"));
    QCOMPARE(f["overlapping_bytes"].toInteger(), 0);

    const QJsonObject totals = root["totals"].toObject();
    QCOMPARE(totals["tensors"].toInteger(), 3);
    QCOMPARE(totals["inline_bytes"].toInteger(), 16);
    QCOMPARE(totals["external_bytes"].toInteger(), 32);

    const QJsonArray problems = root["problems"].toArray();
    QCOMPARE(problems.size(), 1);
    const QJsonObject p = problems[0].toObject();
    QCOMPARE(p["severity"].toString(), QString("warning"));
    QCOMPARE(p["tensor"].toString(), QString("graph/w_ext2"));
    QCOMPARE(p["code"].toString(), QString("unknown-key"));
    QVERIFY(p["message"].isString() && !p["message"].toString().isEmpty());
}

// Three 64 KiB tensors back to back; the middle one pinned inline, the others keeping their
// place. The gap's end, 128 KiB, is a multiple of 128 KiB, but nothing asked for the gap:
// inspect and plan say 65536 orphaned bytes and no padding, and name what they counted against.
void TestCli::aTensorPinnedOutLeavesOrphanedBytesNotPadding()
{
    // As a save pinning t1 inline and keeping the data file leaves them.
    QTemporaryDir dir;
    DataFileBuilder data("m.onnx.data");
    onnx::ModelProto proto = emptyModel();
    for (int i = 0; i < 3; ++i) {
        auto t = rawTensor("t" + std::to_string(i), 2, {65536}, patternBytes(65536, uint8_t(i)));
        if (i != 1)
            data.externalize(t, uint64_t(i) * 65536);
        *proto.mutable_graph()->add_initializer() = t;
    }
    data.place(65536, std::string(65536, '\x01')); // t1's old bytes
    QVERIFY(data.save(dir.path()));
    const QString model = dir.filePath("m.onnx");
    QVERIFY(saveModel(proto, model));

    const auto check = [](const QJsonObject& f, const char* what) {
        QVERIFY2(f["location"].toString() == "m.onnx.data", what);
        QVERIFY2(f["bytes"].toInteger() == 3 * 65536, what);
        QVERIFY2(f["orphaned_bytes"].toInteger() == 65536, what);
        QVERIFY2(f["padding_bytes"].toInteger() == 0, what);
        QVERIFY2(f["alignment"].toInteger() == 4096, what);
        QVERIFY2(f["alignment_from"].toString() == "option", what);
    };
    const CliRun inspected = runCli({"inspect", model, "--json"});
    const QJsonArray files = QJsonDocument::fromJson(inspected.out).object()["files"].toArray();
    QCOMPARE(files.size(), 1);
    check(files[0].toObject(), "inspect");
    // A save keeping every tensor where it is keeps the file as it is, gap and all.
    const CliRun planned = runCli({"plan", model, "--keep", "--json"});
    QCOMPARE(planned.exitCode, 0);
    check(QJsonDocument::fromJson(planned.out).object()["files"].toArray()[0].toObject(), "plan");
}

// A file written with 64 KiB alignment (as onnx_ir writes): counted against the default 4096,
// most of its gap is orphaned; told the alignment it was written with (--align), it is padding.
void TestCli::inspectCountsGapsAgainstTheAlignmentTheFilesWereWrittenWith()
{
    QTemporaryDir dir;
    const QString model = writeTensorsAtZeroAnd64KiB(dir.path(), "m.onnx", 1000);
    QVERIFY(!model.isEmpty());

    const auto inspected = [&](const QStringList& more) {
        const CliRun run = runCli(QStringList{"inspect", model, "--json"} + more);
        const QJsonObject root = QJsonDocument::fromJson(run.out).object();
        int warnings = 0;
        for (const QJsonValue& p : root["problems"].toArray())
            warnings += p.toObject()["code"].toString() == "orphaned-bytes";
        return std::make_pair(root["files"].toArray()[0].toObject(), warnings);
    };
    const auto [byDefault, warnedByDefault] = inspected({});
    QCOMPARE(byDefault["alignment"].toInteger(), 4096);
    QCOMPARE(byDefault["orphaned_bytes"].toInteger(), 65536 - 4096);
    QCOMPARE(warnedByDefault, 1);
    const auto [told, warnedTold] = inspected({"--align", "64KiB"});
    QCOMPARE(told["alignment"].toInteger(), 65536);
    QCOMPARE(told["orphaned_bytes"].toInteger(), 0);
    QCOMPARE(told["padding_bytes"].toInteger(), 65536 - 1000);
    QCOMPARE(warnedTold, 0);
    const CliRun text = runCli({"inspect", model, "--align", "65536"});
    QCOMPARE(text.exitCode, 0);
    QVERIFY2(text.out.contains("orphaned 0 B"), text.out.constData());

    const CliRun bad = runCli({"inspect", model, "--align", "3"});
    QCOMPARE(bad.exitCode, 2);
    QVERIFY2(bad.err.contains("--align: '3' must be 0 or a power of two up to 16 MiB"),
        bad.err.constData());
    const CliRun folder = runCli({"inspect", dir.path(), "--align", "64KiB"});
    QCOMPARE(folder.exitCode, 2);
    QVERIFY2(folder.err.contains("--align audits one model"), folder.err.constData());
}

void TestCli::verifyReportsEveryProblem()
{
    const Run run = runCli({"verify", m_broken});
    QCOMPARE(run.exitCode, 1);
    const QStringList lines = run.errLines();
    QCOMPARE(lines.size(), 2);
    QVERIFY2(lines.filter("missing-file").size() == 1 && lines.filter("graph/gone").size() == 1,
        run.err.constData());
    QVERIFY2(lines.filter("checksum-mismatch").size() == 1 && lines.filter("graph/bad").size() == 1,
        run.err.constData());
    for (const QString& line : lines)
        QVERIFY2(line.contains(m_broken), qPrintable(line));
}

void TestCli::verifyHealthyModel()
{
    const Run run = runCli({"verify", m_model});
    QCOMPARE(run.exitCode, 0); // the unknown key is a warning only
    const Run json = runCli({"verify", m_model, "--json"});
    QCOMPARE(json.exitCode, 0);
    const QJsonObject root = QJsonDocument::fromJson(json.out).object();
    QCOMPARE(root["schema"].toString(), QString("onnx-repack/verify/1"));
    QCOMPARE(root["ok"].toBool(), true);
}

void TestCli::verifyJsonOfUnreadableModel_data()
{
    QTest::addColumn<QString>("file"); // under a temporary dir
    QTest::addColumn<QByteArray>("contents"); // null: the file is not created
    QTest::newRow("missing file") << "missing.onnx" << QByteArray();
    QTest::newRow("text file") << "README.onnx" << QByteArray("not an ONNX model\n");
    QTest::newRow("empty file") << "empty.onnx" << QByteArray("");
    QTest::newRow("binary junk") << "junk.onnx" << QByteArray(64, '\xff');
}

void TestCli::verifyJsonOfUnreadableModel()
{
    QFETCH(QString, file);
    QFETCH(QByteArray, contents);
    QTemporaryDir dir;
    const QString path = dir.filePath(file);
    QVERIFY(writeFile(path, contents));
    const Run text = runCli({"verify", path});
    const Run run = runCli({"verify", path, "--json"});
    QCOMPARE(run.exitCode, 1);
    QCOMPARE(run.exitCode, text.exitCode);
    QCOMPARE(run.errLines(), text.errLines()); // the reason on stderr as well
    QJsonParseError error;
    const QJsonObject root = QJsonDocument::fromJson(run.out, &error).object();
    QVERIFY2(error.error == QJsonParseError::NoError, run.out.constData());
    // The keys of a readable model's verify document, in the same order.
    QCOMPARE(root.keys(),
        (QStringList{
            "external_bytes", "external_tensors", "model", "ok", "problems", "schema", "sources"}));
    QVERIFY(run.out.startsWith("{\n  \"schema\": \"onnx-repack/verify/1\",\n  \"model\""));
    QCOMPARE(root["ok"].toBool(true), false);
    QCOMPARE(root["model"].toObject()["path"].toString(), path);
    QVERIFY(root["external_tensors"].isNull() && root["external_bytes"].isNull());
    QVERIFY(root["sources"].isNull());
    const QJsonArray problems = root["problems"].toArray();
    QCOMPARE(problems.size(), 1);
    const QJsonObject p = problems[0].toObject();
    QCOMPARE(p["severity"].toString(), QString("error"));
    QCOMPARE(p["code"].toString(), QString("unreadable-file"));
    QCOMPARE(p["tensor"].toString(), QString());
    QVERIFY2(p["message"].toString().contains(path), run.out.constData());
}

namespace {

// Bytes a terminal acts on: C0 controls but the line feed ending each line, DEL, and C1
// controls (UTF-8 C2 80 to C2 9F).
bool hasRawControl(const QByteArray& text)
{
    for (qsizetype i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if ((c < 0x20 && c != '\n') || c == 0x7F)
            return true;
        if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80
            && static_cast<unsigned char>(text[i + 1]) < 0xA0)
            return true;
    }
    return false;
}

// Columns of the names used below: CJK ideographs take 2, combining accents 0.
int columns(const QString& text)
{
    int n = 0;
    for (char32_t c : text.toUcs4())
        n += (c >= 0x4E00 && c <= 0x9FFF) ? 2 : (c >= 0x300 && c <= 0x36F) ? 0 : 1;
    return n;
}

// The table rows of `inspect` text: from the NAME header to the first empty line.
QStringList tableLines(const QByteArray& out)
{
    const QStringList lines = QString::fromUtf8(out).split('\n');
    const qsizetype header = lines.indexOf(QRegularExpression("NAME .*")); // an exact match
    const qsizetype end = lines.indexOf(QString(), header);
    return header < 0 || end < 0 ? QStringList{} : lines.mid(header, end - header);
}

} // namespace

void TestCli::controlCharactersEscapedInText()
{
    QTemporaryDir dir;
    onnx::ModelProto model = emptyModel();
    DataFileBuilder data("w\x1b[2J.bin"); // ESC [2J clears a terminal
    *model.mutable_graph()->add_initializer() = rawTensor("line\nbreak", 1, {4});
    *model.mutable_graph()->add_initializer() = rawTensor("tab\there\x7f", 1, {4});
    *model.mutable_graph()->add_initializer() = rawTensor("c1\xc2\x85next", 1, {4});
    *model.mutable_graph()->add_initializer() = rawTensor("bell\a\x1b[31mred", 1, {4});
    auto ext = rawTensor("ext", 1, {4});
    data.append(ext);
    *model.mutable_graph()->add_initializer() = ext;
    auto gone = rawTensor("gone\r", 1, {4});
    setExternal(gone, "no\x1bwhere.bin", "0", "16");
    *model.mutable_graph()->add_initializer() = gone;
    QVERIFY(data.save(dir.path()));
    const QString path = dir.filePath("m.onnx");
    QVERIFY(saveModel(model, path));

    const Run inspect = runCli({"inspect", path});
    QCOMPARE(inspect.exitCode, 1); // the missing data file
    const QStringList table = tableLines(inspect.out);
    QCOMPARE(table.size(), 1 + 6); // no name broke a row in two
    QVERIFY2(!hasRawControl(table.join('\n').toUtf8()), inspect.out.constData());
    for (const char* escaped : {"line\\nbreak", "tab\\there\\x7f", "c1\\u0085next",
             "bell\\x07\\x1b[31mred", "w\\x1b[2J.bin", "gone\\r", "no\\x1bwhere.bin"})
        QVERIFY2(inspect.out.contains(escaped), escaped);

    const Run verify = runCli({"verify", path});
    QCOMPARE(verify.exitCode, 1);
    QVERIFY2(!hasRawControl(verify.err), verify.err.constData());
    QVERIFY2(verify.err.contains("no\\x1bwhere.bin"), verify.err.constData());

    const Run json = runCli({"inspect", path, "--json"}); // JSON escapes them itself, exactly
    const QJsonArray tensors = QJsonDocument::fromJson(json.out).object()["tensors"].toArray();
    QCOMPARE(tensors.size(), 6);
    QCOMPARE(tensors[0].toObject()["name"].toString(), QString("line\nbreak"));
    QCOMPARE(tensors[4].toObject()["location"].toString(), QString("w\x1b[2J.bin"));
}

void TestCli::wideNamesKeepColumnsAligned()
{
    QTemporaryDir dir;
    onnx::ModelProto model = emptyModel();
    const QStringList names{"w", "权重矩阵_嵌入层", "e\u0301cole", "x_很长的张量名称"};
    for (const QString& name : names)
        *model.mutable_graph()->add_initializer() = rawTensor(name.toStdString(), 1, {4});
    const QString path = dir.filePath("m.onnx");
    QVERIFY(saveModel(model, path));

    const Run run = runCli({"inspect", path});
    QCOMPARE(run.exitCode, 0);
    const QStringList lines = tableLines(run.out);
    QCOMPARE(lines.size(), 1 + names.size());
    // Every row's SCOPE cell starts at the same terminal column as the header's.
    const int scopeColumn = columns(lines[0].left(lines[0].indexOf("SCOPE")));
    int widest = 0;
    for (const QString& name : names)
        widest = std::max(widest, columns(name));
    QCOMPARE(scopeColumn, widest + 2);
    for (int row = 1; row < lines.size(); ++row) {
        const QString& line = lines[row];
        QVERIFY2(line.startsWith(names[row - 1]), qPrintable(line));
        QCOMPARE(columns(line.left(line.indexOf("graph"))), scopeColumn);
    }
}

void TestCli::terminalTextHelpers()
{
    using repack::displayWidth;
    QCOMPARE(displayWidth("weights"), size_t(7));
    QCOMPARE(displayWidth("权重"), size_t(4)); // East Asian wide
    QCOMPARE(displayWidth("ＡＢ"), size_t(4)); // fullwidth forms
    QCOMPARE(displayWidth("e\u0301"), size_t(1)); // a combining accent takes no column
    QCOMPARE(displayWidth("a\u200bb"), size_t(2)); // nor does a zero-width space
    QCOMPARE(repack::printable("ok \\ é 权"), std::string("ok \\ é 权"));
    QCOMPARE(repack::printable(std::string("a\0b", 3)), std::string("a\\x00b"));
    // The ends of printable ASCII, which is passed through as it is without decoding.
    QCOMPARE(repack::printable("~ \x7f\x1f"), std::string("~ \\x7f\\x1f"));
    QCOMPARE(displayWidth("~ }"), size_t(3));
    QCOMPARE(repack::printable("\xff\xc3"), std::string("\\xff\\xc3")); // not UTF-8
    QCOMPARE(repack::printable("\xed\xa0\x80"), std::string("\\xed\\xa0\\x80")); // a surrogate
    QCOMPARE(repack::fitWidth("权重矩阵", 5), std::string("权重 ")); // never half a character
    QCOMPARE(repack::fitWidth("a\nb", 6), std::string("a\\nb  "));
    QCOMPARE(repack::formatSeconds(0.0912), std::string("0.09 s"));
    QCOMPARE(repack::formatSeconds(0), std::string("0.00 s"));
    QCOMPARE(repack::formatSeconds(4.2), std::string("4.20 s"));
    QCOMPARE(repack::formatSeconds(9.999), std::string("10.0 s"));
    QCOMPARE(repack::formatSeconds(12.345), std::string("12.3 s"));
    QCOMPARE(repack::formatSeconds(125.4), std::string("125 s"));
}

void TestCli::emptyFileSaysSo_data()
{
    QTest::addColumn<QStringList>("args"); // the model's path follows
    QTest::newRow("inspect") << QStringList{"inspect"};
    QTest::newRow("verify") << QStringList{"verify"};
    QTest::newRow("repack") << QStringList{"repack", "-o", "out.onnx"};
    QTest::newRow("plan") << QStringList{"plan"};
}

void TestCli::emptyFileSaysSo()
{
    QFETCH(QStringList, args);
    QTemporaryDir dir;
    const QString path = dir.filePath("empty.onnx");
    QVERIFY(writeFile(path, QByteArray("")));
    const Run run = runCli(args << path);
    QCOMPARE(run.exitCode, 1);
    QCOMPARE(QString::fromUtf8(run.err), "onnx-repack: " + path + ": empty file\n");
}

void TestCli::outOfMemoryIsAnErrorNamingTheFile_data()
{
    QTest::addColumn<QStringList>("args"); // the model's path follows
    QTest::newRow("inspect") << QStringList{"inspect"};
    QTest::newRow("inspect --json") << QStringList{"inspect", "--json"};
    QTest::newRow("verify") << QStringList{"verify"};
    QTest::newRow("repack") << QStringList{"repack", "-o", "out/new.onnx"};
    QTest::newRow("plan --json") << QStringList{"plan", "--json"};
}

void TestCli::outOfMemoryIsAnErrorNamingTheFile()
{
#if defined(__SANITIZE_ADDRESS__)
    QSKIP("AddressSanitizer reserves terabytes of address space: no ulimit -v under it");
#endif
    QFETCH(QStringList, args);
    QTemporaryDir dir;
    const QString path = dir.filePath("many.onnx");
    QVERIFY(writeFile(path, manyTinyTensors(1000000)));
    // 100 MB of address space: the process starts, its index of a million tensors cannot.
    QStringList quoted;
    for (const QString& a :
        QStringList{qEnvironmentVariable("REPACK_CLI")} + args + QStringList{path})
        quoted << "'" + a + "'";
    QProcess shell;
    shell.setWorkingDirectory(dir.path());
    shell.start("/bin/sh", {"-c", "ulimit -v 100000 && exec " + quoted.join(' ')});
    QVERIFY(shell.waitForFinished(120000));
    const QString err = QString::fromUtf8(shell.readAllStandardError());
    QCOMPARE(shell.exitStatus(), QProcess::NormalExit); // not an abort
    QCOMPARE(shell.exitCode(), 1);
    QVERIFY2(err.contains("out of memory") && err.contains(path), qPrintable(err));
    QVERIFY2(!err.contains("terminate called"), qPrintable(err));
    QCOMPARE(QDir(dir.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries | QDir::Hidden),
        QStringList{"many.onnx"}); // nothing written, not even the output folder
}

void TestCli::aTimeoutThatIsNoNumberOfSecondsIsAUsageError_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("environment"); // ONNX_REPACK_TIMEOUT, unset when empty
    QTest::addColumn<QByteArray>("named"); // what the message names
    QTest::newRow("words") << QStringList{"inspect", m_model, "--timeout", "soon"} << QString()
                           << QByteArray("--timeout soon");
    QTest::newRow("negative") << QStringList{"verify", m_model, "--timeout=-1"} << QString()
                              << QByteArray("--timeout -1");
    QTest::newRow("not finite") << QStringList{"clean", m_model, "--timeout", "inf"} << QString()
                                << QByteArray("--timeout inf");
    QTest::newRow("empty, over the environment's")
        << QStringList{"inspect", m_model, "--timeout", ""} << "1" << QByteArray("--timeout :");
    QTest::newRow("the environment's")
        << QStringList{"inspect", m_model} << "2 s" << QByteArray("ONNX_REPACK_TIMEOUT=2 s");
}

void TestCli::aTimeoutThatIsNoNumberOfSecondsIsAUsageError()
{
    QFETCH(QStringList, args);
    QFETCH(QString, environment);
    QFETCH(QByteArray, named);
    CliOptions options;
    if (!environment.isEmpty())
        options.env.insert("ONNX_REPACK_TIMEOUT", environment);
    const Run run = runCli(args, options);
    QCOMPARE(run.exitCode, 2);
    QVERIFY(run.out.isEmpty());
    QCOMPARE(run.errLines().size(), 1);
    QVERIFY2(run.err.contains(named), run.err.constData());
    // A limit that is a number (0: none, over the environment's) lets the command run.
    QCOMPARE(runCli({args[0], args[1], "--timeout", "0"}, options).exitCode, 0);
}

void TestCli::eachWaitIsSaidOnce()
{
    // The token's observer hears every wait the transport reports, "" when one is over: each
    // text is said once, a repeat of the last never, the end of a wait not at all, and a
    // server's name cannot write control characters to the terminal.
    std::ostringstream err;
    for (const char* what :
        {"host: model.onnx, attempt 2 of 12", "host: model.onnx, attempt 2 of 12", "",
            "host: model.onnx, attempt 3 of 12", "", "", "evil\x1b[2J: w.bin"})
        repack::cli::sayWaiting(what, err);
    QCOMPARE(err.str(),
        std::string("onnx-repack: host: model.onnx, attempt 2 of 12\n"
                    "onnx-repack: host: model.onnx, attempt 3 of 12\n"
                    "onnx-repack: evil\\x1b[2J: w.bin\n"));
}

void TestCli::cleanRemovesOnlyTheLeftoversOfAFolderWithoutAModel()
{
    // What a repack stopped before its commit (killed, or on a machine that lost power) leaves
    // in OUT: its temporary, and no model yet. Beside it, the user's files, some named much
    // like a temporary: clean removes the temporary and nothing else.
    QTemporaryDir dir;
    const QString out = dir.filePath("out");
    QVERIFY(QDir().mkpath(out));
    const QString leftover = out + "/model.onnx.data.repack-tmp-0123456789ab";
    QVERIFY(writeFile(leftover, QByteArray(5000, 'x')));
    const QStringList users{"model.onnx.data.repack-tmp-0123456789AB", // not the tool's hex
        "model.onnx.data.repack-tmp-0123456789a", "model.onnx.data.repack-tmp-backup",
        "notes.repack-tmp-", ".repack-tmp-0123456789ab", "model.onnx.data", "notes.txt"};
    for (const QString& name : users)
        QVERIFY(writeFile(out + "/" + name, name.toUtf8()));
    // A symlink and a folder named as temporaries are never the tool's.
    QVERIFY(QFile::link("notes.txt", out + "/link.repack-tmp-abcdefabcdef"));
    QVERIFY(QDir().mkpath(out + "/sub.repack-tmp-abcdefabcdef"));

    const Run run = runCli({"clean", out});
    QCOMPARE(run.exitCode, 0);
    QVERIFY2(run.out.contains("removed " + leftover.toUtf8() + " ("), run.out.constData());
    QVERIFY2(run.out.contains("1 leftover(s) removed"), run.out.constData());
    QVERIFY(!QFileInfo::exists(leftover));
    QStringList left = users;
    left << "link.repack-tmp-abcdefabcdef"
         << "sub.repack-tmp-abcdefabcdef";
    left.sort();
    QCOMPARE(QDir(out).entryList(
                 QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot, QDir::Name),
        left);
    for (const QString& name : users)
        QCOMPARE(fileContents(out + "/" + name), name.toUtf8());
    QCOMPARE(fileContents(out + "/link.repack-tmp-abcdefabcdef"), QByteArray("notes.txt"));

    const Run again = runCli({"clean", out + "/"});
    QCOMPARE(again.exitCode, 0);
    QVERIFY2(again.out.contains("no leftovers"), again.out.constData());
}

void TestCli::cleanKeepsATemporaryAModelAboveNames()
{
    // A save killed after its commit can leave a model naming its data by the temporary's
    // name; a model reads files at or below its folder, so one above OUT may: it is kept.
    QTemporaryDir dir;
    const QString out = dir.filePath("out");
    QVERIFY(QDir().mkpath(out));
    const QString named = out + "/w.bin.repack-tmp-0123456789ab";
    QVERIFY(writeFile(named, QByteArray(16, '\1')));
    onnx::ModelProto model = emptyModel();
    auto tensor = rawTensor("w", 1, {4});
    setExternal(tensor, "out/w.bin.repack-tmp-0123456789ab", "0", "16");
    *model.mutable_graph()->add_initializer() = tensor;
    QVERIFY(saveModel(model, dir.filePath("m.onnx")));
    const QString dead = out + "/x.data.repack-tmp-0123456789ab";
    QVERIFY(writeFile(dead, "x"));

    const Run run = runCli({"clean", out});
    QCOMPARE(run.exitCode, 0);
    QVERIFY(QFileInfo::exists(named));
    QVERIFY(!QFileInfo::exists(dead));
    QVERIFY2(run.err.contains(named.toUtf8() + " is kept: m.onnx reads it"), run.err.constData());
}

void TestCli::cleanRemovesNothingWhileASaveHoldsTheFolder()
{
    // A save that runs holds the folder's lock: its temporaries are its own, never leftovers.
    QTemporaryDir dir;
    const QString temp = dir.filePath("model.onnx.data.repack-tmp-0123456789ab");
    QVERIFY(writeFile(temp, "x"));
    auto lock = repack::FolderLock::acquire({dir.path().toStdString()}, 0);
    QVERIFY(lock);
    const Run run = runCli({"clean", dir.path()});
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains("another save is running in"), run.err.constData());
    QVERIFY(QFileInfo::exists(temp));
}

QTEST_APPLESS_MAIN(TestCli)
#include "tst_cli.moc"
