#include "graph_readers.h"

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>

namespace fixtures {
namespace {

QString readersDir()
{
    return qEnvironmentVariable("REPACK_READERS_DIR");
}

// Runs `program` with `arguments`: empty when it exits 0, else what it printed.
QString failureOf(const QString& program, const QStringList& arguments,
    const QProcessEnvironment& environment = QProcessEnvironment::systemEnvironment())
{
    QProcess process;
    process.setProcessEnvironment(environment);
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(program, arguments);
    if (!process.waitForFinished(300000) || process.exitStatus() != QProcess::NormalExit)
        return program + QStringLiteral(" did not finish");
    const QString output = QString::fromUtf8(process.readAll());
    if (process.exitCode() == 0)
        return {};
    return output.isEmpty() ? program + QStringLiteral(" failed") : output;
}

} // namespace

bool onnxRuntimeAvailable()
{
    const QString modules = qEnvironmentVariable("REPACK_ORT_MODULES");
    const QString node = qEnvironmentVariable("REPACK_NODE");
    return !modules.isEmpty() && !node.isEmpty() && !node.endsWith(QStringLiteral("-NOTFOUND"))
        && QFileInfo::exists(modules + QStringLiteral("/onnxruntime-node/package.json"));
}

QString onnxRuntimeFailure(const QStringList& modelPaths)
{
    if (!onnxRuntimeAvailable())
        return {};
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("NODE_PATH"), qEnvironmentVariable("REPACK_ORT_MODULES"));
    return failureOf(qEnvironmentVariable("REPACK_NODE"),
        QStringList{readersDir() + QStringLiteral("/ort_load.js")} + modelPaths, environment);
}

QString onnxWriterFailure(const QStringList& arguments)
{
    return failureOf(qEnvironmentVariable("REPACK_PYTHON", QStringLiteral("/usr/bin/python3")),
        QStringList{readersDir() + QStringLiteral("/onnx_writer.py")} + arguments);
}

QString onnxRuntimeWriteFailure(
    const QString& source, const QString& output, const QString& dataFile)
{
    if (!onnxRuntimeAvailable())
        return QStringLiteral("ONNX Runtime is not installed for the tests");
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("NODE_PATH"), qEnvironmentVariable("REPACK_ORT_MODULES"));
    return failureOf(qEnvironmentVariable("REPACK_NODE"),
        {readersDir() + QStringLiteral("/ort_write.js"), source, output, dataFile}, environment);
}

QString graphBuildFailure(const QStringList& modelPaths)
{
    QString failures;
    if (const QString ort = onnxRuntimeFailure(modelPaths); !ort.isEmpty())
        failures += QStringLiteral("ONNX Runtime: ") + ort;
    const QString python
        = failureOf(qEnvironmentVariable("REPACK_PYTHON", QStringLiteral("/usr/bin/python3")),
            QStringList{readersDir() + QStringLiteral("/graph_build.py")} + modelPaths);
    if (!python.isEmpty())
        failures += QStringLiteral("onnx.shape_inference (strict): ") + python;
    return failures;
}

} // namespace fixtures
