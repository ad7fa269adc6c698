// Running the onnx-repack CLI (the REPACK_CLI environment variable CTest sets) from a suite.
#pragma once

#include <QByteArray>
#include <QMap>
#include <QString>
#include <QStringList>

namespace fixtures {

struct CliRun {
    int exitCode = -1; // -1 when the process did not finish normally in time
    QByteArray out;
    QByteArray err;
    QStringList errLines() const;
};

struct CliOptions {
    QMap<QString, QString> env; // added to the suite's own environment
    int timeoutMs = 120000;
};

CliRun runCli(const QStringList& args, const CliOptions& options = {});

// What a shell reports of a CLI run: its exit code, or 128 + the signal that ended it (QProcess
// says only "CrashExit", which a segfault gives too; a shell tells a SIGKILL apart).
struct ShellRun {
    int status = -1; // -1 when it did not finish in time
    QByteArray out;
    QByteArray err;
};
inline constexpr int kSigkillStatus = 128 + 9;

// Runs `onnx-repack COMMAND ARGS` ($REPACK_CLI) in `dir` through /bin/sh, with the test hooks
// ONNX_REPACK_CRASH_AT = `crashAt` and ONNX_REPACK_FAIL_AT = `failAt` (none when empty).
ShellRun runCliInShell(const QString& dir, const QString& command, const QStringList& args,
    const QString& crashAt = {}, const QString& failAt = {});

} // namespace fixtures
