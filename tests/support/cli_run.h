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

} // namespace fixtures
