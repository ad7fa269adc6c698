// Every top-level window fits the screen it opens on, with its Save / OK buttons on screen: the
// main window, a remote (read-only) one, Compare, the folder window and the Open URL dialog, at
// each screen of REPACK_FIT_SCREEN ("1366x768@1.5": the screen's pixels and QT_SCALE_FACTOR).
// The offscreen platform takes the screen from a JSON file, so main() writes one and sets the
// platform and scale before QApplication exists; CTest runs one process per screen.
// Window state is kept per screen size and scale, and a geometry that does not fit is never
// restored.
#include "core/save/save_conflicts.h"
#include "tests/support/folder_fixtures.h"
#include "tests/support/tensor_builder.h"
#include "ui/save/replace_dialog.h"
#include "ui/util/settings_store.h"
#include "ui/util/window_fit.h"
#include "ui/views/repack_panel.h"
#include "ui/windows/compare_window.h"
#include "ui/windows/folder_window.h"
#include "ui/windows/main_window.h"
#include "ui/windows/open_url_dialog.h"

#include <QAbstractButton>
#include <QApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QMessageBox>
#include <QPushButton>
#include <QScreen>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>

#include <cstdio>
#include <cstdlib>

namespace {

QString describe(const QRect& r)
{
    return QStringLiteral("%1,%2 %3x%4").arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height());
}

QRect available(const QWidget& window)
{
    const QScreen* screen = window.screen() ? window.screen() : QGuiApplication::primaryScreen();
    return screen->availableGeometry();
}

// The window's frame, and every widget of `buttons`, lie inside the screen's available area;
// each button is shown whole (not cut by a pane or a scroll area).
void checkFits(QWidget& window, const QList<QWidget*>& buttons)
{
    const QRect screen = available(window);
    QVERIFY2(screen.contains(window.frameGeometry()),
        qPrintable(QStringLiteral("%1 frame %2 on %3")
                       .arg(window.metaObject()->className(), describe(window.frameGeometry()),
                           describe(screen))));
    QVERIFY2(window.minimumSizeHint().width() <= screen.width()
            && window.minimumSizeHint().height() <= screen.height(),
        qPrintable(QStringLiteral("%1 needs at least %2x%3 on %4")
                       .arg(window.metaObject()->className())
                       .arg(window.minimumSizeHint().width())
                       .arg(window.minimumSizeHint().height())
                       .arg(describe(screen))));
    for (QWidget* button : buttons) {
        QVERIFY(button);
        const QString name = button->objectName().isEmpty()
            ? qobject_cast<QAbstractButton*>(button)->text()
            : button->objectName();
        QVERIFY2(button->isVisible(), qPrintable(name));
        const QRect global(button->mapToGlobal(QPoint(0, 0)), button->size());
        QVERIFY2(screen.contains(global),
            qPrintable(
                QStringLiteral("%1 at %2 on %3").arg(name, describe(global), describe(screen))));
        QVERIFY2(button->visibleRegion().boundingRect() == button->rect(),
            qPrintable(QStringLiteral("%1 shows %2 of %3")
                           .arg(name, describe(button->visibleRegion().boundingRect()),
                               describe(button->rect()))));
    }
}

QToolButton* panelButton(ui::MainWindow& window, QAction* action)
{
    for (QToolButton* button : window.repackPanel()->findChildren<QToolButton*>()) {
        if (button->defaultAction() == action)
            return button;
    }
    return nullptr;
}

bool open(ui::MainWindow& window, const QString& path)
{
    QSignalSpy opened(&window, &ui::MainWindow::modelOpened);
    return window.openFile(path, true) && opened.wait(60000);
}

QString sample()
{
    return QFINDTESTDATA("../../resources/sample/sample.onnx");
}

} // namespace

class TestWindowFit : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("onnx-repack-tests"));
        QApplication::setApplicationName(QStringLiteral("tst_window_fit"));
        qInfo("screen %s, available %s, scale %s",
            qPrintable(describe(QGuiApplication::primaryScreen()->geometry())),
            qPrintable(describe(QGuiApplication::primaryScreen()->availableGeometry())),
            qgetenv("QT_SCALE_FACTOR").constData());
    }

    void init()
    {
        // Every window starts from defaults, not from what the last one left.
        QVariantMap cleared;
        for (const QString& key : ui::settingsIn(QStringLiteral("window")).keys())
            cleared.insert(key, QByteArray());
        ui::writeSettings(cleared);
    }

    void theMainWindowFitsWithSaveOnScreen()
    {
        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(open(window, sample()));
        QTest::qWait(100); // the layouts settle on the new texts
        checkFits(window,
            {panelButton(window, window.saveAction()), panelButton(window, window.saveAsAction())});
    }

    void theCompareWindowFits()
    {
        ui::CompareWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy finished(&window, &ui::CompareWindow::finished);
        window.compare(sample(), sample());
        QVERIFY(finished.wait(60000));
        QTest::qWait(100);
        checkFits(window, {});
    }

    void theFolderWindowFitsWithSaveOnScreen()
    {
        QTemporaryDir dir;
        const std::string bytes = fixtures::patternBytes(4096, 3);
        for (const char* graph : {"encoder", "decoder", "decoder_with_past"})
            QVERIFY(fixtures::writeGraph(dir.path(),
                QString::fromLatin1(graph) + QStringLiteral(".onnx"),
                std::string(graph) + ".onnx_data", {{"embed", bytes}}));
        ui::FolderWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy inspected(&window, &ui::FolderWindow::inspected);
        window.openFolder(dir.path());
        QVERIFY(inspected.wait(60000));
        QTest::qWait(100);
        checkFits(window, {window.saveButton(), window.cancelButton()});
    }

    void theOpenUrlDialogFitsWithOpenOnScreen()
    {
        ui::OpenUrlDialog dialog({QStringLiteral("hf://org/repo/model.onnx")});
        dialog.setUrl(QStringLiteral("https://example.org/a/long/path/to/a/model.onnx"));
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        auto* buttons = dialog.findChild<QDialogButtonBox*>();
        QVERIFY(buttons);
        checkFits(dialog, {dialog.openButton(), buttons->button(QDialogButtonBox::Cancel)});
    }

    // The question a save asks before it replaces a file many models read: every reader is
    // named, and Cancel stays on screen.
    void theReplaceQuestionFitsWithCancelOnScreen()
    {
        repack::SaveConflict conflict;
        conflict.file = "/models/shared/model.onnx_data";
        for (int i = 0; i < 60; ++i)
            conflict.users.push_back("/models/shared/a-folder-with-a-rather-long-name/graph-"
                + std::to_string(i) + ".onnx");
        conflict.message = "model.onnx_data is read by 60 models";
        QWidget parent;
        bool checked = false;
        QTimer::singleShot(200, &parent, [&checked] {
            QWidget* dialog = QApplication::activeModalWidget();
            auto* box = qobject_cast<QMessageBox*>(dialog);
            if (box) {
                checkFits(*box, {box->button(QMessageBox::Cancel)});
                checked = !QTest::currentTestFailed();
            }
            if (dialog)
                dialog->close();
        });
        ui::askToReplace(&parent, {conflict}, QStringLiteral("this model's"),
            QStringLiteral("model-2.onnx_data"));
        QVERIFY(checked);
    }

    // A geometry saved on a larger screen (or at a smaller scale) is not restored here: the
    // window opens at its default size, fitted.
    void aGeometryThatDoesNotFitIsNotRestored()
    {
        const QRect screen = QGuiApplication::primaryScreen()->availableGeometry();
        QByteArray wide;
        {
            ui::MainWindow window;
            window.setMinimumSize(0, 0);
            window.resize(screen.width() + 600, screen.height() + 300);
            wide = window.saveGeometry();
        }
        QWidget probe;
        ui::writeSettings({{ui::screenKey(QStringLiteral("window/geometry"), &probe), wide}});
        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY2(
            screen.contains(window.frameGeometry()), qPrintable(describe(window.frameGeometry())));
    }

    // The state left at one screen size and scale comes back at that one, and is not what a
    // window on another screen starts from.
    void windowStateIsKeptPerScreenAndScale()
    {
        QWidget probe;
        const QString key = ui::screenKey(QStringLiteral("window/geometry"), &probe);
        const QScreen* screen = QGuiApplication::primaryScreen();
        QVERIFY2(key.contains(QStringLiteral("%1x%2")
                                  .arg(screen->geometry().width())
                                  .arg(screen->geometry().height())),
            qPrintable(key));
        QVERIFY2(key.contains(QString::number(screen->devicePixelRatio())), qPrintable(key));
        QSize left;
        {
            ui::MainWindow window;
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            window.resize(window.minimumSizeHint().expandedTo(QSize(500, 400)));
            left = window.size();
            window.close();
        }
        QVERIFY(!ui::setting(key).toByteArray().isEmpty());
        QVERIFY(ui::setting(QStringLiteral("window/geometry")).toByteArray().isEmpty());
        ui::MainWindow next;
        next.show();
        QVERIFY(QTest::qWaitForWindowExposed(&next));
        QCOMPARE(next.size(), left);
    }
};

// REPACK_FIT_SCREEN=WxH@SCALE: the offscreen screen's pixels and QT_SCALE_FACTOR, set before
// the application exists (neither can change after).
int main(int argc, char** argv)
{
    const QByteArray spec = qgetenv("REPACK_FIT_SCREEN").isEmpty() ? QByteArray("1024x700@1")
                                                                   : qgetenv("REPACK_FIT_SCREEN");
    int width = 0;
    int height = 0;
    double scale = 0;
    if (std::sscanf(spec.constData(), "%dx%d@%lf", &width, &height, &scale) != 3 || width <= 0
        || height <= 0 || scale <= 0) {
        std::fprintf(stderr, "REPACK_FIT_SCREEN wants WxH@SCALE, not %s\n", spec.constData());
        return 2;
    }
    QTemporaryDir configDir;
    const QString config = configDir.filePath(QStringLiteral("screen.json"));
    QFile file(config);
    if (!file.open(QIODevice::WriteOnly)
        || file.write(QStringLiteral(R"({"screens": [{"name": "fit", "x": 0, "y": 0, )"
                                     R"("width": %1, "height": %2, "logicalDpi": 96, )"
                                     R"("logicalBaseDpi": 96, "dpr": 1}]})")
                          .arg(width)
                          .arg(height)
                          .toUtf8())
            < 0)
        return 2;
    file.close();
    qputenv("QT_QPA_PLATFORM", "offscreen:configfile=" + QFile::encodeName(config));
    qputenv("QT_SCALE_FACTOR", QByteArray::number(scale));
    QApplication app(argc, argv);
    TestWindowFit test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_window_fit.moc"
