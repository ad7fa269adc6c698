// Entry point of `onnx-repack-gui [MODEL...] [--screenshot OUT.png]`. Without a model it opens
// the bundled sample; without a display it prints `onnx-repack inspect` of the model instead.
#include "cli/cli.h"
#include "ui/layout_map_view.h"
#include "ui/main_window.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QItemSelectionModel>
#include <QTableView>
#include <QTimer>

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

// The sample model: in the source tree for a developer build, else where `cmake --install` put it.
QString sampleModel()
{
    std::error_code error;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
    const QStringList candidates{
        QStringLiteral(REPACK_SAMPLE_SOURCE),
        QString::fromStdString((exe.parent_path().parent_path() / REPACK_INSTALL_DATADIR
            / "onnx-repack/sample/sample.onnx")
                                   .string()),
        QStringLiteral(REPACK_SAMPLE_INSTALLED),
    };
    for (const QString& candidate : candidates) {
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

// Opens `model` (if any) in `window`, then renders the window to `out` once the event loop has
// laid it out and painted it.
int takeScreenshot(ui::MainWindow& window, const QString& model, const QString& out)
{
    window.resize(1400, 860);
    window.show();
    auto grab = [&window, out] {
        // Select the largest external tensor so the picture shows the shared selection.
        const auto& tensors = window.snapshot().tensors;
        int largest = -1;
        for (int i = 0; i < tensors.size(); ++i) {
            if (tensors[i].external && (largest < 0 || tensors[i].bytes > tensors[largest].bytes))
                largest = i;
        }
        if (largest >= 0) {
            const QModelIndex row = window.tensorView()->model()->index(largest, 0);
            window.tensorView()->selectionModel()->select(
                row, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        }
        QTimer::singleShot(300, &window, [&window, out] {
            if (!window.grab().save(out)) {
                std::fprintf(stderr, "onnx-repack-gui: cannot write %s\n", qPrintable(out));
                QApplication::exit(1);
                return;
            }
            QApplication::exit(0);
        });
    };
    if (model.isEmpty()) {
        grab();
    } else {
        QObject::connect(&window, &ui::MainWindow::modelOpened, &window, grab);
        QObject::connect(&window, &ui::MainWindow::openFailed, &window,
            [](const QString&, const QString& error) {
                std::fprintf(stderr, "onnx-repack-gui: %s\n", qPrintable(error));
                QApplication::exit(1);
            });
        window.openFile(model, true);
    }
    return QApplication::exec();
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
    parser.addPositionalArgument(QStringLiteral("MODEL"), QStringLiteral("ONNX models to open."),
        QStringLiteral("[MODEL...]"));
    // Parsed before any QApplication exists: without a display, creating one would abort.
    if (!parser.parse(arguments(argc, argv))) {
        std::fprintf(stderr, "onnx-repack-gui: %s\n", qPrintable(parser.errorText()));
        return 2;
    }
    if (parser.isSet(help)) {
        std::fputs(qPrintable(parser.helpText()), stdout);
        return 0;
    }
    if (parser.isSet(version)) {
        std::printf("onnx-repack-gui %s\n", REPACK_VERSION);
        return 0;
    }

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
        ui::MainWindow window;
        return takeScreenshot(
            window, models.isEmpty() ? QString() : models.constFirst(), parser.value(screenshot));
    }

    auto* first = new ui::MainWindow;
    first->setAttribute(Qt::WA_DeleteOnClose);
    first->show();
    if (!models.isEmpty())
        first->openFile(models.constFirst());
    for (qsizetype i = 1; i < models.size(); ++i) {
        auto* window = new ui::MainWindow;
        window->setAttribute(Qt::WA_DeleteOnClose);
        window->show();
        window->openFile(models[i]);
    }
    return QApplication::exec();
}
