#include "python_reader.h"

#include <QCryptographicHash>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

namespace fixtures {

QString onnxLoadFailure(const QString& modelPath)
{
    QProcess python;
    python.start(qEnvironmentVariable("REPACK_PYTHON", QStringLiteral("/usr/bin/python3")),
        {QStringLiteral("-c"), QStringLiteral("import onnx, sys; onnx.load(sys.argv[1])"),
            modelPath});
    if (!python.waitForFinished(120000) || python.exitStatus() != QProcess::NormalExit)
        return QStringLiteral("python did not finish");
    return python.exitCode() == 0 ? QString() : QString::fromUtf8(python.readAllStandardError());
}

PythonLoad loadInPython(const QString& script, const QString& modelPath)
{
    PythonLoad result;
    const QString python
        = qEnvironmentVariable("REPACK_PYTHON", QStringLiteral("/usr/bin/python3"));
    QProcess process;
    process.start(python, {script, modelPath});
    if (!process.waitForFinished(300000) || process.exitStatus() != QProcess::NormalExit) {
        result.error = QStringLiteral("%1 %2 did not finish").arg(python, script);
        return result;
    }
    if (process.exitCode() != 0) {
        result.error = QString::fromUtf8(process.readAllStandardError()).trimmed();
        return result;
    }
    const QJsonObject object = QJsonDocument::fromJson(process.readAllStandardOutput()).object();
    for (auto it = object.begin(); it != object.end(); ++it)
        result.values[it.key()] = it.value().toString();
    result.ok = true;
    return result;
}

ValueHashes hashesOf(const std::map<std::string, std::string>& bytes)
{
    ValueHashes out;
    for (const auto& [name, value] : bytes)
        out[QString::fromStdString(name)] = QCryptographicHash::hash(
            QByteArrayView(value.data(), qsizetype(value.size())), QCryptographicHash::Sha1)
                                                .toHex();
    return out;
}

QString compareValues(const ValueHashes& got, const ValueHashes& expected)
{
    QString out;
    for (auto it = expected.begin(); it != expected.end(); ++it) {
        if (!got.contains(it.key()))
            out += it.key() + QStringLiteral(": missing\n");
        else if (got[it.key()] != it.value())
            out += it.key() + QStringLiteral(": values differ\n");
    }
    for (auto it = got.begin(); it != got.end(); ++it)
        if (!expected.contains(it.key()))
            out += it.key() + QStringLiteral(": not expected\n");
    return out;
}

QString interopFailure(
    const QString& script, const QString& dir, const QString& source, const QString& output)
{
    const QString list = dir + QStringLiteral("/interop.txt");
    QFile file(list);
    if (!file.open(QIODevice::WriteOnly)
        || file.write((source + u'\t' + output + u'\t').toUtf8()) < 0)
        return QStringLiteral("cannot write ") + list;
    file.close();
    QProcess python;
    python.setProcessChannelMode(QProcess::MergedChannels);
    python.start(
        qEnvironmentVariable("REPACK_PYTHON", QStringLiteral("/usr/bin/python3")), {script, list});
    if (!python.waitForFinished(120000) || python.exitStatus() != QProcess::NormalExit)
        return script + QStringLiteral(" did not finish");
    return python.exitCode() == 0 ? QString() : QString::fromUtf8(python.readAll());
}

} // namespace fixtures
