// Every command can be stopped, and every command ends ($REPACK_CLI against a FaultServer on
// 127.0.0.1): SIGINT and SIGTERM during `repack URL -o OUT` (while the structure is fetched,
// while the data is copied, while the server stalls) end it within a second with 130 / 143,
// nothing new at OUT and no temporary left; --timeout (and ONNX_REPACK_TIMEOUT) ends a command
// that waits on a silent server with exit 1 and says so; every command takes both.
#include "tests/support/fault_server.h"
#include "tests/support/save_fixtures.h"

#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <chrono>
#include <csignal>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include <signal.h>

using namespace fixtures;

namespace {

constexpr uint64_t kMiB = 1 << 20;

// A model served at /m/model.onnx with 4 MiB of data in /m/model.onnx.data, answered as a file
// server does but for `mode`: "structure" never answers a GET of the model (a stall while its
// structure is fetched); "copy" sends the data file's bytes slowly (8 KiB every 20 ms); "stall"
// sends 100 bytes of the data file, then nothing.
class StoppingServer {
public:
    explicit StoppingServer(std::string mode)
        : m_mode(std::move(mode))
    {
        QVERIFY(m_dir.isValid());
        writeUint8Model(
            m_dir.path(), "model.onnx", {kMiB, kMiB, kMiB, kMiB}, 1024, "model.onnx.data");
        for (const char* name : {"model.onnx", "model.onnx.data"})
            m_files["/m/" + std::string(name)] = fileContents(m_dir.filePath(name)).toStdString();
        m_server = std::make_unique<FaultServer>(
            [this](int socket, const FaultRequest& request, int) { answer(socket, request); });
    }
    QString url() const { return QString::fromStdString(m_server->url("m/model.onnx")); }
    // Whether the moment the mode makes has come: the stalled GET, or data being sent.
    bool holding() const { return m_holding; }

private:
    void answer(int socket, FaultRequest request)
    {
        const auto file = m_files.find(request.target);
        if (file == m_files.end()) {
            FaultServer::respond(socket, "404 Not Found", {}, "no");
            return;
        }
        const std::string& bytes = file->second;
        if (request.range) // a range past the end is the rest of the file
            request.range->second = std::min<uint64_t>(request.range->second, bytes.size() - 1);
        const bool data = request.target.ends_with(".data");
        if (request.method != "GET" || data == (m_mode == "structure")) {
            FaultServer::answerAsFile(socket, request, bytes, "\"v1\"");
            return;
        }
        const auto [first, last]
            = request.range.value_or(std::make_pair(uint64_t(0), uint64_t(bytes.size() - 1)));
        if (m_mode == "structure") {
            m_holding = true;
            m_server->stall(socket);
            return;
        }
        if (!FaultServer::send(socket,
                "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes " + std::to_string(first)
                    + "-" + std::to_string(last) + "/" + std::to_string(bytes.size())
                    + "\r\nContent-Length: " + std::to_string(last - first + 1)
                    + "\r\nETag: \"v1\"\r\nConnection: close\r\n\r\n"))
            return;
        const std::string_view body = std::string_view(bytes).substr(first, last - first + 1);
        if (m_mode == "stall") {
            if (FaultServer::send(socket, body.substr(0, 100))) {
                m_holding = true;
                m_server->stall(socket);
            }
            return;
        }
        for (size_t at = 0; at < body.size() && !m_server->stopping(); at += 8192) {
            if (!FaultServer::send(socket, body.substr(at, 8192)))
                return;
            m_holding = true;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }

    const std::string m_mode;
    QTemporaryDir m_dir;
    std::map<std::string, std::string> m_files;
    std::atomic<bool> m_holding{false};
    std::unique_ptr<FaultServer> m_server; // last: stopped before the rest goes
};

// Every name under `dir` (folders too), each file with the SHA-1 of its bytes.
QMap<QString, QByteArray> listing(const QString& dir)
{
    QMap<QString, QByteArray> all;
    QDirIterator it(dir, QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
        QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        all.insert(QDir(dir).relativeFilePath(path),
            it.fileInfo().isDir()
                ? QByteArray("<dir>")
                : QCryptographicHash::hash(fileContents(path), QCryptographicHash::Sha1).toHex());
    }
    return all;
}

// The CLI started with SIGINT and SIGTERM at their default (a suite run as a background job
// inherits SIGINT ignored, which the CLI keeps ignoring, as every tool does).
void startCli(QProcess& process, const QStringList& args, const QMap<QString, QString>& env = {})
{
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.remove("ONNX_REPACK_TIMEOUT");
    for (auto [name, value] : env.asKeyValueRange())
        environment.insert(name, value);
    process.setProcessEnvironment(environment);
    process.setChildProcessModifier([] {
        ::signal(SIGINT, SIG_DFL);
        ::signal(SIGTERM, SIG_DFL);
    });
    process.start(qEnvironmentVariable("REPACK_CLI"), args);
}

// Ends `process` if it still runs when the test fails.
struct Reaper {
    QProcess& process;
    ~Reaper()
    {
        if (process.state() != QProcess::NotRunning) {
            process.kill();
            process.waitForFinished(5000);
        }
    }
};

// Sends `signal` to the running CLI: the milliseconds it took to end by itself (not killed)
// with 128 + `signal`, within 1.5 s; -1 else, with why in `err` (after its stderr).
qint64 stopWith(QProcess& cli, int signal, QByteArray& err)
{
    if (cli.state() != QProcess::Running) {
        err = "not running: " + cli.readAllStandardError();
        return -1;
    }
    QElapsedTimer stopping;
    stopping.start();
    if (::kill(static_cast<pid_t>(cli.processId()), signal) != 0 || !cli.waitForFinished(10000)) {
        err = "did not end";
        return -1;
    }
    const qint64 ms = stopping.elapsed();
    err = cli.readAllStandardError();
    if (cli.exitStatus() != QProcess::NormalExit || cli.exitCode() != 128 + signal)
        err += "\nended with " + QByteArray::number(cli.exitCode()) + " (a crash: "
            + QByteArray(cli.exitStatus() == QProcess::CrashExit ? "yes" : "no") + ")";
    else if (ms >= 1500)
        err += "\n" + QByteArray::number(ms) + " ms from the signal to the exit";
    else
        return ms;
    return -1;
}

} // namespace

class TestCliSignals : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void aSignalStopsARepackLeavingNothing_data();
    void aSignalStopsARepackLeavingNothing();
    void everyCommandStopsOnASignal_data();
    void everyCommandStopsOnASignal();
    void aTimeoutEndsACommandThatWaits_data();
    void aTimeoutEndsACommandThatWaits();
    void whatAKilledRepackLeavesCleanRemoves();
};

void TestCliSignals::initTestCase()
{
    QVERIFY2(QFileInfo(qEnvironmentVariable("REPACK_CLI")).isExecutable(),
        "REPACK_CLI must name the onnx-repack binary");
}

void TestCliSignals::aSignalStopsARepackLeavingNothing_data()
{
    QTest::addColumn<QString>("mode");
    QTest::addColumn<int>("signal");
    for (const char* mode : {"structure", "copy", "stall"})
        for (int signal : {SIGINT, SIGTERM})
            QTest::addRow("%s, %s", mode, signal == SIGINT ? "SIGINT" : "SIGTERM")
                << mode << signal;
}

void TestCliSignals::aSignalStopsARepackLeavingNothing()
{
    QFETCH(QString, mode);
    QFETCH(int, signal);
    StoppingServer server(mode.toStdString());
    // OUT holds the user's file; the repack writes into a folder it must make there.
    QTemporaryDir work;
    const QString out = work.filePath("out");
    QVERIFY(QDir().mkpath(out));
    QVERIFY(QFile(out + "/notes.txt").open(QIODevice::WriteOnly));
    const QString target = out + "/new/model.onnx";
    const auto before = listing(work.path());

    QProcess cli;
    Reaper reaper{cli};
    startCli(cli, {"repack", server.url(), "-o", target});
    QVERIFY(cli.waitForStarted());
    // The moment: the stalled GET, or the data flowing into a temporary of OUT.
    QVERIFY2(QTest::qWaitFor(
                 [&] {
                     return cli.state() != QProcess::Running
                         || (server.holding()
                             && (mode == "structure" || !saveTempsIn(out + "/new").isEmpty()));
                 },
                 20000),
        "the moment did not come");
    QByteArray err;
    const qint64 ms = stopWith(cli, signal, err);
    QVERIFY2(ms >= 0, err.constData());
    QVERIFY2(err.contains(signal == SIGINT ? "stopped by SIGINT" : "stopped by SIGTERM"),
        err.constData());
    QVERIFY2(err.contains("nothing was written"), err.constData());
    QCOMPARE(listing(work.path()), before); // no temporary, no model, no folder made for it
    qInfo("%s: exit %d, %lld ms after the signal", qPrintable(mode), cli.exitCode(), ms);
}

void TestCliSignals::everyCommandStopsOnASignal_data()
{
    QTest::addColumn<QStringList>("args"); // URL stands for the model's address
    QTest::addColumn<QString>("mode");
    QTest::newRow("inspect") << QStringList{"inspect", "URL"} << "structure";
    QTest::newRow("verify") << QStringList{"verify", "URL"} << "stall";
    QTest::newRow("plan") << QStringList{"plan", "URL", "-o", "OUT"} << "structure";
    QTest::newRow("diff") << QStringList{"diff", "URL", "URL"} << "structure";
    QTest::newRow("repack") << QStringList{"repack", "URL", "-o", "OUT"} << "stall";
}

void TestCliSignals::everyCommandStopsOnASignal()
{
    QFETCH(QStringList, args);
    QFETCH(QString, mode);
    StoppingServer server(mode.toStdString());
    QTemporaryDir work;
    args.replaceInStrings("URL", server.url());
    args.replaceInStrings("OUT", work.filePath("model.onnx"));
    QProcess cli;
    Reaper reaper{cli};
    startCli(cli, args);
    QVERIFY(cli.waitForStarted());
    QVERIFY(QTest::qWaitFor(
        [&] { return server.holding() || cli.state() != QProcess::Running; }, 20000));
    QByteArray err;
    QVERIFY2(stopWith(cli, SIGINT, err) >= 0, err.constData());
    QVERIFY2(err.contains("onnx-repack: " + args[0].toUtf8() + " was stopped by SIGINT"),
        err.constData());
    QVERIFY2(cli.readAllStandardOutput().isEmpty(), "a stopped command printed a result");
    QCOMPARE(QDir(work.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), QStringList());
}

void TestCliSignals::aTimeoutEndsACommandThatWaits_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QString>("environment"); // ONNX_REPACK_TIMEOUT, when not empty
    QTest::addColumn<QString>("limit"); // as the message names it
    const QString flag = "--timeout 1 s";
    QTest::newRow("repack, stalled data") << QStringList{"repack", "URL", "-o", "OUT", "--timeout",
        "2"} << "stall" << QString() << "--timeout 2 s";
    QTest::newRow("repack, stalled structure")
        << QStringList{"repack", "URL", "-o", "OUT", "--timeout", "1"} << "structure" << QString()
        << flag;
    QTest::newRow("repack, ONNX_REPACK_TIMEOUT")
        << QStringList{"repack", "URL", "-o", "OUT"} << "stall"
        << "1.5"
        << "ONNX_REPACK_TIMEOUT=1.5 s";
    QTest::newRow("--timeout over ONNX_REPACK_TIMEOUT")
        << QStringList{"repack", "URL", "-o", "OUT", "--timeout", "1"} << "stall"
        << "600" << flag;
    QTest::newRow("inspect") << QStringList{"inspect", "URL", "--timeout", "1"} << "structure"
                             << QString() << flag;
    QTest::newRow("verify") << QStringList{"verify", "URL", "--timeout", "1"} << "stall"
                            << QString() << flag;
}

void TestCliSignals::aTimeoutEndsACommandThatWaits()
{
    QFETCH(QStringList, args);
    QFETCH(QString, mode);
    QFETCH(QString, environment);
    QFETCH(QString, limit);
    StoppingServer server(mode.toStdString());
    QTemporaryDir work;
    args.replaceInStrings("URL", server.url());
    args.replaceInStrings("OUT", work.filePath("model.onnx"));
    QMap<QString, QString> env;
    if (!environment.isEmpty())
        env.insert("ONNX_REPACK_TIMEOUT", environment);
    QElapsedTimer running;
    running.start();
    QProcess cli;
    Reaper reaper{cli};
    startCli(cli, args, env);
    QVERIFY(cli.waitForFinished(20000));
    const qint64 ms = running.elapsed();
    const QByteArray err = cli.readAllStandardError();
    QCOMPARE(cli.exitStatus(), QProcess::NormalExit);
    QCOMPARE(cli.exitCode(), 1);
    QVERIFY(server.holding()); // it did wait on the server
    // The limit, and a little more: the transport looks at the token about once a second.
    const double seconds = limit.section(' ', -2, -2).section('=', -1).toDouble();
    QVERIFY2(ms < (seconds + 1.5) * 1000,
        qPrintable(QString("%1 ms for a limit of %2").arg(ms).arg(limit)));
    const QByteArray said = "onnx-repack: " + args[0].toUtf8() + " did not finish within "
        + limit.toUtf8() + " (while ";
    QVERIFY2(err.contains(said), err.constData());
    QVERIFY2(!err.contains("cancel"), err.constData());
    QCOMPARE(QDir(work.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), QStringList());
}

void TestCliSignals::whatAKilledRepackLeavesCleanRemoves()
{
    // SIGKILL cannot be caught: the temporary the data was flowing into stays, in an OUT that
    // holds no model yet. `clean OUT` removes it, and only it.
    StoppingServer server("copy");
    QTemporaryDir work;
    const QString out = work.filePath("out");
    QVERIFY(QDir().mkpath(out));
    QVERIFY(QFile(out + "/notes.txt").open(QIODevice::WriteOnly));
    const auto before = listing(work.path());
    QProcess cli;
    Reaper reaper{cli};
    startCli(cli, {"repack", server.url(), "-o", out + "/model.onnx"});
    QVERIFY(cli.waitForStarted());
    QVERIFY(
        QTest::qWaitFor([&] { return server.holding() && !saveTempsIn(out).isEmpty(); }, 20000));
    cli.kill();
    QVERIFY(cli.waitForFinished(10000));
    const QStringList left = saveTempsIn(out);
    QCOMPARE(left.size(), 1);

    QProcess clean;
    startCli(clean, {"clean", out});
    QVERIFY(clean.waitForFinished(20000));
    QCOMPARE(clean.exitCode(), 0);
    QVERIFY2(clean.readAllStandardOutput().contains(left[0].toUtf8()), "clean did not name it");
    QCOMPARE(listing(work.path()), before);
}

QTEST_GUILESS_MAIN(TestCliSignals)
#include "tst_cli_signals.moc"
