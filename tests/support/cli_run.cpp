#include "cli_run.h"

#include <QProcess>
#include <QProcessEnvironment>

namespace fixtures {

QStringList CliRun::errLines() const
{
    return QString::fromUtf8(err).split('\n', Qt::SkipEmptyParts);
}

CliRun runCli(const QStringList& args, const CliOptions& options)
{
    QProcess process;
    if (!options.env.isEmpty()) {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (auto it = options.env.begin(); it != options.env.end(); ++it)
            env.insert(it.key(), it.value());
        process.setProcessEnvironment(env);
    }
    process.start(qEnvironmentVariable("REPACK_CLI"), args);
    CliRun run;
    if (!process.waitForFinished(options.timeoutMs) || process.exitStatus() != QProcess::NormalExit)
        return run;
    run.exitCode = process.exitCode();
    run.out = process.readAllStandardOutput();
    run.err = process.readAllStandardError();
    return run;
}

ShellRun runCliInShell(const QString& dir, const QString& command, const QStringList& args,
    const QString& crashAt, const QString& failAt)
{
    QProcess process;
    process.setWorkingDirectory(dir);
    auto env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("ONNX_REPACK_CRASH_AT"));
    env.remove(QStringLiteral("ONNX_REPACK_FAIL_AT"));
    if (!crashAt.isEmpty())
        env.insert(QStringLiteral("ONNX_REPACK_CRASH_AT"), crashAt);
    if (!failAt.isEmpty())
        env.insert(QStringLiteral("ONNX_REPACK_FAIL_AT"), failAt);
    process.setProcessEnvironment(env);
    QStringList shellArgs{QStringLiteral("-c"),
        QStringLiteral("\"$0\" \"$@\"; echo \"repack-status=$?\" >&2"),
        qEnvironmentVariable("REPACK_CLI"), command};
    process.start(QStringLiteral("/bin/sh"), shellArgs + args);
    ShellRun run;
    if (!process.waitForFinished(120000))
        return run;
    run.out = process.readAllStandardOutput();
    run.err = process.readAllStandardError();
    const qsizetype at = run.err.lastIndexOf("repack-status=");
    if (at >= 0)
        run.status = run.err.mid(at + 14).trimmed().toInt();
    return run;
}

} // namespace fixtures
