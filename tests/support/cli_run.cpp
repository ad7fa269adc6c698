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

} // namespace fixtures
