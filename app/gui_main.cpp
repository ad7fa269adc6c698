// Entry point of `onnx-repack-gui [MODEL|FOLDER...] [--screenshot OUT.png [--screenshot-view VIEW]
// [--screenshot-size WxH]]`.
// Without a model it opens the bundled sample (resources/sample beside the executable, or the
// installed share folder), read-only as every file the app ships (ui/util/shipped_files.h);
// without a display it prints `onnx-repack inspect` of the model instead. The screenshot mode
// itself lives in ui/windows/screenshot.cpp.
#include "cli/cli.h"
#include "ui/util/shipped_files.h"
#include "ui/windows/main_window.h"
#include "ui/windows/open_windows.h"
#include "ui/windows/screenshot.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <system_error>

namespace {

bool hasDisplay()
{
    return !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")
        || !qEnvironmentVariableIsEmpty("DISPLAY")
        || !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY");
}

// Where the sample model is looked for, from where this executable is, never from where it was
// built (a build tree moved or deleted, a copy of the executable): resources/sample/ beside it
// (the build tree, where CMake copies it, or a copy with its resources), else the share folder
// of the prefix it is installed in (bin/../share/onnx-repack/sample), else the prefix it was
// configured for.
QStringList sampleCandidates()
{
    std::error_code error;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
    const std::filesystem::path dir = exe.parent_path();
    return {
        QString::fromStdString((dir / "resources/sample/sample.onnx").string()),
        QString::fromStdString(
            (dir.parent_path() / REPACK_INSTALL_DATADIR / "onnx-repack/sample/sample.onnx")
                .lexically_normal()
                .string()),
        QStringLiteral(REPACK_SAMPLE_INSTALLED),
    };
}

// The first sample model found; empty when there is none.
QString sampleModel()
{
    for (const QString& candidate : sampleCandidates()) {
        if (QFileInfo(candidate).isFile())
            return candidate;
    }
    return {};
}

QStringList arguments(int argc, char** argv)
{
    QStringList args;
    for (int i = 0; i < argc; ++i)
        args << QString::fromLocal8Bit(argv[i]);
    return args;
}

} // namespace

int main(int argc, char** argv)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("See and repack where the tensors of ONNX models are stored."));
    const QCommandLineOption help = parser.addHelpOption();
    const QCommandLineOption version = parser.addVersionOption();
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
        QStringLiteral("Render the window to a PNG file and exit."), QStringLiteral("OUT.png"));
    parser.addOption(screenshot);
    const QCommandLineOption screenshotView(QStringLiteral("screenshot-view"),
        QStringLiteral("What --screenshot renders: main (default), placement, before-after, "
                       "compare (of the first two models: A B), or folder (a folder of graphs)."),
        QStringLiteral("VIEW"), QStringLiteral("main"));
    parser.addOption(screenshotView);
    const QCommandLineOption screenshotSize(QStringLiteral("screenshot-size"),
        QStringLiteral("The window size --screenshot renders, e.g. 1024x700."),
        QStringLiteral("WxH"), QStringLiteral("1400x860"));
    parser.addOption(screenshotSize);
    parser.addPositionalArgument(QStringLiteral("MODEL"),
        QStringLiteral("ONNX models to open, each in a window; a folder opens its graphs as one "
                       "unit."),
        QStringLiteral("[MODEL|FOLDER...]"));
    // Parsed before any QApplication exists: without a display, creating one would abort.
    if (!parser.parse(arguments(argc, argv))) {
        std::fprintf(stderr, "onnx-repack-gui: %s\n", qPrintable(parser.errorText()));
        return 2;
    }
    if (parser.isSet(help)) {
        // The usage line names the program from QCoreApplication::arguments(); a core
        // application needs no display.
        const QCoreApplication core(argc, argv);
        std::fputs(qPrintable(parser.helpText()), stdout);
        return 0;
    }
    if (parser.isSet(version)) {
        std::printf("onnx-repack-gui %s\n", REPACK_VERSION);
        return 0;
    }

    // What the app ships is never written, however its files are opened (here, or later by
    // File > Open or Open Recent).
    for (const QString& candidate : sampleCandidates())
        ui::addShippedFolder(QFileInfo(candidate).absolutePath());
    QStringList models = parser.positionalArguments();
    if (models.isEmpty()) {
        const QString sample = sampleModel();
        if (!sample.isEmpty())
            models << sample;
    }

    if (!hasDisplay()) {
        if (models.isEmpty()) {
            std::fprintf(stderr, "onnx-repack-gui: no display available and no model given\n");
            return 2;
        }
        const QByteArray model = QFile::encodeName(models.constFirst());
        std::printf(
            "onnx-repack-gui: no display available (neither DISPLAY nor WAYLAND_DISPLAY is set); "
            "printing `onnx-repack inspect %s` instead\n",
            model.constData());
        std::fflush(stdout);
        return repack::cli::inspect(model.constData(), false, std::cout, std::cerr);
    }

    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("onnx-repack"));
    QApplication::setApplicationName(QStringLiteral("onnx-repack-gui"));
    QApplication::setApplicationDisplayName(QStringLiteral("Onnx Repack"));
    QApplication::setApplicationVersion(QStringLiteral(REPACK_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("onnx-repack-gui"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/onnx-repack-gui.svg")));

    if (parser.isSet(screenshot)) {
        ui::ScreenshotRequest request;
        request.view = parser.value(screenshotView);
        request.models = models;
        request.out = parser.value(screenshot);
        const QStringList size = parser.value(screenshotSize).split(u'x');
        const int width = size.value(0).toInt();
        const int height = size.value(1).toInt();
        if (size.size() != 2 || width <= 0 || height <= 0) {
            std::fprintf(stderr, "onnx-repack-gui: --screenshot-size wants WxH, e.g. 1024x700\n");
            return 2;
        }
        request.size = QSize(width, height);
        return ui::renderScreenshot(request);
    }

    // A folder opens as one unit in a folder window, each model in a window of its own; with
    // neither, an empty main window.
    if (models.isEmpty()) {
        auto* window = new ui::MainWindow;
        window->setAttribute(Qt::WA_DeleteOnClose);
        window->show();
    } else {
        ui::openWindows(models);
    }
    return QApplication::exec();
}
