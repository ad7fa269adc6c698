// File > Open URL… (issue 38): a model served by Debian's nginx on 127.0.0.1 opens through the
// window's one opening path (MainWindow::openUrl, what the menu's dialog calls) and shows the
// tensors of its local copy; it is read-only (Save disabled, saying why; Save As… is a normal
// save and its refusal a normal error); it is compared with a local model; Cancel during a
// stalled fetch (a FaultServer that never answers) returns at once and frees the worker within
// two seconds, the window unchanged; a bad URL is refused naming it. A folder of the Hub, on a
// scripted Hub (tests/support/hub_fixture.h), opens a read-only folder window showing what one
// of its local copy shows, and can be cancelled while the Hub stalls; its "Save a Local Copy…"
// writes what the core's save of its download writes, at the commit the window shows whatever
// its branch is at since, Cancel leaving nothing, and the Hugging Face cache is refused. Each
// window running remote work (Open URL, a Hub folder's reading and local copy, a compare, the
// save of a remote model) says beside its busy bar what the command's token was told it waits
// for, and its Cancel stops the command within a second while the transport waits to retry.
#include "dialog_answerer.h"
#include "ui_fixtures.h"

#include "core/inspect/folder_inspect.h"
#include "core/io/tensor_bytes.h"
#include "core/model/model.h"
#include "core/plan/file_layout.h"
#include "core/save/folder_save.h"
#include "tests/support/data_file_builder.h"
#include "tests/support/fault_server.h"
#include "tests/support/hub_fixture.h"
#include "tests/support/model_builder.h"
#include "tests/support/nginx_fixture.h"
#include "tests/support/python_reader.h"
#include "tests/support/tensor_builder.h"
#include "ui/models/layout_diff.h"
#include "ui/models/tensor_table_model.h"
#include "ui/save/model_opener.h"
#include "ui/util/display_name.h"
#include "ui/util/settings_store.h"
#include "ui/util/wait_relay.h"
#include "ui/views/repack_panel.h"
#include "ui/windows/compare_window.h"
#include "ui/windows/folder_window.h"
#include "ui/windows/main_window.h"
#include "ui/windows/open_url_dialog.h"
#include "ui/windows/open_windows.h"
#include "ui/windows/recent_files.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPointer>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QThreadPool>
#include <QToolButton>
#include <QtTest>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace fs = std::filesystem;

namespace {

QString qs(const std::string& text)
{
    return QString::fromStdString(text);
}

// The rows of the window's table: name, size and storage of each tensor, in order.
QStringList tableRows(const ui::MainWindow& window)
{
    QStringList rows;
    for (const ui::TensorRow& row : window.snapshot().tensors)
        rows << QStringLiteral("%1|%2|%3|%4")
                    .arg(row.name)
                    .arg(row.bytes)
                    .arg(row.storage)
                    .arg(row.offset);
    return rows;
}

// `window` opened `path` (true) as File > Open URL… opens a URL (File > Open a path), or said
// why not (false, `error` set).
bool opens(ui::MainWindow& window, const QString& path, QString* error = nullptr)
{
    QSignalSpy ok(&window, &ui::MainWindow::modelOpened);
    QSignalSpy failed(&window, &ui::MainWindow::openFailed);
    const bool started
        = ui::isRemoteName(path) ? window.openUrl(path) : window.openFile(path, true);
    if (!started || !QTest::qWaitFor([&] { return !ok.isEmpty() || !failed.isEmpty(); }, 30000))
        return false;
    if (error && !failed.isEmpty())
        *error = failed.constFirst().value(1).toString();
    return !ok.isEmpty();
}

// The cells of `table`, a line a row, '|' between cells.
QString tableText(const QTableWidget* table)
{
    QStringList rows;
    for (int r = 0; r < table->rowCount(); ++r) {
        QStringList cells;
        for (int col = 0; col < table->columnCount(); ++col)
            cells << (table->item(r, col) ? table->item(r, col)->text() : QString());
        rows << cells.join(u'|');
    }
    return rows.join(u'\n');
}

// The scripted Hub (tests/support/hub_fixture.h) as the app finds it, through the environment
// (HF_ENDPOINT, HF_TOKEN, an HF cache of its own), with the files of an Optimum export, and
// those files on disk.
struct HubCase {
    fixtures::HubFixture hub;
    QTemporaryDir dir;
    HubCase()
    {
        hub.files = fixtures::optimumFiles();
        hub.lfs = fixtures::dataFilesOf(hub.files);
        qputenv("HF_ENDPOINT", QByteArray::fromStdString(hub.endpoint()));
        qputenv("HF_TOKEN", QByteArray::fromStdString(fixtures::kHubToken));
        qputenv("HF_HUB_CACHE", dir.filePath(QStringLiteral("cache")).toUtf8());
        qputenv("NO_PROXY", "127.0.0.1,localhost");
        fixtures::writeLocally(hub.files, dir.filePath(QStringLiteral("local")).toStdString());
    }
    // Its two decoders hold the same weights, each in its own data file.
    void useSharedWeights()
    {
        fixtures::addSharedDecoders(hub.files);
        hub.lfs = fixtures::dataFilesOf(hub.files);
        fixtures::writeLocally(hub.files, dir.filePath(QStringLiteral("local")).toStdString());
    }
    QString localFolder() const { return dir.filePath(QStringLiteral("local/onnx")); }
};

// The folder window `window` opened for the folder `url` names, once it shows the folder; null
// when the opening failed (the main window's lastError() says why).
ui::FolderWindow* openedFolder(ui::MainWindow& window, const QString& url)
{
    QSignalSpy failed(&window, &ui::MainWindow::openFailed);
    if (!window.openUrl(url))
        return nullptr;
    ui::FolderWindow* folder = nullptr;
    const bool done = QTest::qWaitFor(
        [&] {
            if (!failed.isEmpty())
                return true;
            for (ui::FolderWindow* w : window.findChildren<ui::FolderWindow*>())
                if (!w->isBusy() && w->graphsTable()->rowCount() > 0)
                    folder = w;
            return folder != nullptr;
        },
        30000);
    return done && failed.isEmpty() ? folder : nullptr;
}

// hf://org/repo/onnx of the scripted Hub opened in a folder window of `window` (null when the
// opening failed: window.lastError() says why), its dialogs answered.
struct HubFolderCase {
    HubCase c;
    DialogAnswerer answerer;
    ui::MainWindow window;
    ui::FolderWindow* folder = nullptr;
    explicit HubFolderCase(bool sharedWeights = false)
    {
        if (sharedWeights)
            c.useSharedWeights();
        folder = openedFolder(window, QStringLiteral("hf://org/repo/onnx"));
    }
};

// `folder`'s "Save a Local Copy…" into `outDir` with the shared data file `name`, as the button
// does once its dialog gave the folder: whether it saved (within 30 s).
bool savesLocalCopy(ui::FolderWindow& folder, const QString& outDir, const QString& name)
{
    QSignalSpy done(&folder, &ui::FolderWindow::copySaved);
    folder.saveLocalCopy(outDir, name);
    return (!done.isEmpty() || done.wait(30000)) && done.constFirst().value(0).toBool();
}

// How a server holds a remote command: it never answers, or it answers 503 with Retry-After:
// 30 (the transport waits to ask again).
enum class Hold { Stall, RetryLater };

// A remote command of one of the app's windows, started and held by its server: File > Open
// URL…, the reading of a Hub folder, its local copy, a compare with a URL, the save of a model
// opened from the Hub. It knows the cancel token the window handed the core (the last a
// WaitRelay watched), where the window says what the command waits for, and its Cancel.
struct RemoteWork {
    enum Kind { OpenUrl, ReadHubFolder, CopyHubFolder, Compare, SaveHubModel };

    RemoteWork(Kind kind, Hold hold)
        : kind(kind)
        , hold(hold)
        , server([this](int socket, const fixtures::FaultRequest&, int) {
            ++asked;
            if (this->hold == Hold::Stall)
                server.stall(socket);
            else
                fixtures::FaultServer::respond(
                    socket, "503 Service Unavailable", {"Retry-After: 30"}, {});
        })
    {
        ui::WaitRelay::setWatchObserver([this](const repack::CancelToken& t) { token = &t; });
    }
    ~RemoteWork()
    {
        ui::WaitRelay::setWatchObserver({});
        server.stop();
        if (folder)
            folder->close();
        if (compare)
            compare->close();
    }

    // Starts the command; true once its server holds it (`why` says why not).
    bool start()
    {
        window.show();
        if (!QTest::qWaitForWindowExposed(&window))
            return failed(QStringLiteral("the window was never shown"));
        const QString held = qs(server.url("m/model.onnx"));
        switch (kind) {
        case OpenUrl:
            window.openUrl(held);
            break;
        case ReadHubFolder:
            qputenv("HF_ENDPOINT", "http://127.0.0.1:" + QByteArray::number(server.port()));
            window.openUrl(QStringLiteral("hf://org/repo/onnx"));
            folder = window.findChild<ui::FolderWindow*>();
            break;
        case CopyHubFolder:
            folder = openedFolder(window, QStringLiteral("hf://org/repo/onnx"));
            if (!folder)
                return failed(window.lastError());
            holdCdn();
            token = nullptr; // the reading's, over
            folder->saveLocalCopy(hub.dir.filePath(QStringLiteral("copy")), {});
            break;
        case Compare: {
            const QString local = hub.dir.filePath(QStringLiteral("m"));
            QDir().mkpath(local);
            uifixtures::writeMixedModel(local);
            if (!opens(window, QDir(local).filePath(QStringLiteral("model.onnx"))))
                return failed(window.lastError());
            token = nullptr; // the opening's, over
            compare = window.compareWith(held);
            break;
        }
        case SaveHubModel: {
            QString error;
            if (!opens(window, QStringLiteral("hf://org/repo/onnx/encoder_model.onnx"), &error))
                return failed(error);
            holdCdn();
            token = nullptr; // the opening's, over
            window.saveTo(hub.dir.filePath(QStringLiteral("saved.onnx")));
            break;
        }
        }
        if (!QTest::qWaitFor([this] { return isHeld(); }, 20000))
            return failed(QStringLiteral("the server never held the command"));
        return true;
    }
    bool isHeld() const { return asked > 0 || hub.hub.cdnStalls > 0 || hub.hub.cdnBusyAnswers > 0; }
    // What the CDN of the Hub does with the data files' bytes from now on.
    void holdCdn()
    {
        if (hold == Hold::Stall)
            hub.hub.stallCdn = true;
        else
            hub.hub.busyCdn = true;
    }
    bool failed(const QString& error)
    {
        why = error;
        return false;
    }

    // The window of the command, and its status bar's, status row's or its own Cancel.
    QWidget* shownIn()
    {
        if (folder)
            return folder;
        if (compare)
            return compare;
        return &window;
    }
    // Where the window says what the command waits for.
    QLabel* waitLabel() { return shownIn()->findChild<QLabel*>(QStringLiteral("waitingFor")); }
    QPushButton* cancelButton()
    {
        if (folder)
            return folder->cancelButton();
        for (QPushButton* button : shownIn()->findChildren<QPushButton*>())
            if (button->text() == QStringLiteral("Cancel") && button->isVisible())
                return button;
        return nullptr;
    }
    // The command has ended, its worker too.
    bool isOver() const
    {
        const bool ended = kind == OpenUrl ? !window.isLoading()
            : kind == ReadHubFolder        ? !folder || !folder->isBusy()
            : kind == CopyHubFolder        ? !folder->isBusy()
            : kind == Compare              ? !compare->isRunning()
                                           : !window.isSaving();
        return ended && QThreadPool::globalInstance()->activeThreadCount() == 0;
    }

    const Kind kind;
    const Hold hold;
    std::atomic<int> asked{0}; // requests the held server had
    fixtures::FaultServer server; // the server of a URL, or the Hub (ReadHubFolder)
    HubCase hub; // the Hub whose CDN holds a copy's or a save's reads
    DialogAnswerer answerer;
    ui::MainWindow window;
    QPointer<ui::FolderWindow> folder;
    QPointer<ui::CompareWindow> compare;
    const repack::CancelToken* token = nullptr; // valid while the command runs
    QString why;
};

// A row for each kind of remote work.
void remoteWorkRows()
{
    QTest::addColumn<int>("kind");
    QTest::addRow("Open URL") << int(RemoteWork::OpenUrl);
    QTest::addRow("reading a Hub folder") << int(RemoteWork::ReadHubFolder);
    QTest::addRow("local copy of a Hub folder") << int(RemoteWork::CopyHubFolder);
    QTest::addRow("compare with a URL") << int(RemoteWork::Compare);
    QTest::addRow("save of a model of the Hub") << int(RemoteWork::SaveHubModel);
}

// `token` says `what` from a thread of its own, as the transport does from the worker.
void sayFromWorker(const repack::CancelToken& token, const std::string& what)
{
    std::thread([&token, what] { token.waiting(what); }).join();
}

// Why the folder `copy` is not, file for file and byte for byte, what the core's shared save
// (data file `name`) of the local folder `local` writes into another folder, onnx.load reading
// each graph; empty when it is.
QString differsFromSaveOf(const QString& local, const QString& copy, const std::string& name)
{
    repack::FolderSaveOptions options;
    options.sharedData = name;
    const QTemporaryDir expectedDir;
    auto expected
        = repack::saveFolder(local.toStdString(), expectedDir.path().toStdString(), options);
    if (!expected)
        return qs(expected.error().message);
    const auto written = fixtures::filesUnder(copy.toStdString());
    const auto wanted = fixtures::filesUnder(expectedDir.path().toStdString());
    if (!written.count(name))
        return qs("no " + name);
    if (written.size() != wanted.size())
        return QStringLiteral("%1 files written, %2 expected")
            .arg(written.size())
            .arg(wanted.size());
    for (const auto& [file, bytes] : wanted) {
        if (!written.count(file) || written.at(file) != bytes)
            return qs(file + " differs");
        if (file.ends_with(".onnx"))
            if (const QString why = fixtures::onnxLoadFailure(QDir(copy).filePath(qs(file)));
                !why.isEmpty())
                return why;
    }
    return {};
}

} // namespace

class TestOpenUrl : public QObject {
    Q_OBJECT

private:
    fixtures::NginxFixture m_nginx;
    QString m_local; // the model served, as a local file
    QString m_url; // its address

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("onnx-repack-tests"));
        QSettings().clear();
        if (fixtures::NginxFixture::executable().isEmpty())
            return;
        const QString dir = qs((m_nginx.www() / "m").string());
        QVERIFY(QDir().mkpath(dir));
        QVERIFY(!uifixtures::writeMixedModel(dir).empty());
        const QString why = m_nginx.start();
        QVERIFY2(why.isEmpty(), qPrintable(why));
        m_local = QDir(dir).filePath(QStringLiteral("model.onnx"));
        m_url = qs(m_nginx.url("m/model.onnx"));
    }

    void showsTheTensorsOfItsLocalCopy()
    {
        SKIP_WITHOUT_NGINX();
        DialogAnswerer answerer;
        ui::MainWindow local;
        QVERIFY(opens(local, m_local));
        ui::MainWindow remote;
        QString error;
        QVERIFY2(opens(remote, m_url, &error), qPrintable(error));
        QVERIFY(answerer.titles.isEmpty());
        QVERIFY(remote.isReadOnly());
        QCOMPARE(remote.snapshot().tensors.size(), 6);
        QCOMPARE(tableRows(remote), tableRows(local));
        QCOMPARE(remote.tensorModel()->rowCount(), local.tensorModel()->rowCount());
        QCOMPARE(remote.currentPath(), m_url);
        // The title and File > Open Recent name it by its address.
        QVERIFY2(remote.windowTitle().startsWith(QStringLiteral("model.onnx (http://127.0.0.1:")),
            qPrintable(remote.windowTitle()));
        QVERIFY2(remote.windowTitle().contains(QStringLiteral("(read-only)")),
            qPrintable(remote.windowTitle()));
        QVERIFY(!local.windowTitle().contains(QStringLiteral("read-only")));
        // A visible line says it is read-only and which version of the served file it shows.
        auto* banner = remote.findChild<QLabel*>(QStringLiteral("readOnlyBanner"));
        QVERIFY(banner && !banner->isHidden());
        QVERIFY2(
            banner->text().startsWith(QStringLiteral("Read-only: ")), qPrintable(banner->text()));
        QVERIFY2(banner->text().contains(QStringLiteral("etag \""), Qt::CaseInsensitive),
            qPrintable(banner->text()));
        QVERIFY(local.findChild<QLabel*>(QStringLiteral("readOnlyBanner"))->isHidden());
        ui::waitForSettingsWritten();
        QCOMPARE(QSettings().value(QStringLiteral("recentFiles")).toStringList().value(0), m_url);
    }

    void aSignedUrlIsShownAndRememberedWithoutItsQuery()
    {
        SKIP_WITHOUT_NGINX();
        DialogAnswerer answerer;
        ui::MainWindow window;
        const QString signedUrl = m_url + QStringLiteral("?X-Amz-Signature=secret123");
        QString error;
        QVERIFY2(opens(window, signedUrl, &error), qPrintable(error));
        QVERIFY(!window.windowTitle().contains(QStringLiteral("secret123")));
        ui::waitForSettingsWritten();
        const QStringList recent = QSettings().value(QStringLiteral("recentFiles")).toStringList();
        QCOMPARE(recent.value(0), m_url);
        QVERIFY(!recent.join(u' ').contains(QStringLiteral("secret123")));
    }

    void saveInPlaceIsDisabledSayingWhy()
    {
        SKIP_WITHOUT_NGINX();
        DialogAnswerer answerer;
        ui::MainWindow window;
        QVERIFY(opens(window, m_url));
        QTRY_VERIFY(!window.isPlanning());
        QVERIFY(!window.saveAction()->isEnabled());
        QVERIFY2(window.saveAction()->toolTip().contains(QStringLiteral("read-only")),
            qPrintable(window.saveAction()->toolTip()));
        QVERIFY2(window.saveAsAction()->isEnabled(), qPrintable(window.saveAsAction()->toolTip()));
        // Ctrl+S offers Save As (a local copy) instead of doing nothing.
        for (const QKeySequence& keys : QKeySequence::keyBindings(QKeySequence::Save)) {
            QVERIFY(window.saveAsAction()->shortcuts().contains(keys));
            QVERIFY(!window.saveAction()->shortcuts().contains(keys));
        }
        // Save (a caller) writes nothing to a URL.
        QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
        window.save();
        QTest::qWait(100);
        QVERIFY(finished.isEmpty());
        QVERIFY(!window.isSaving());
    }

    // Save As… goes through the normal save: it writes a local copy, or (while the core refuses
    // a remote model's save) ends with the core's message in a dialog, the window unchanged.
    void saveAsIsANormalSave()
    {
        SKIP_WITHOUT_NGINX();
        DialogAnswerer answerer;
        ui::MainWindow window;
        QVERIFY(opens(window, m_url));
        QTRY_VERIFY(!window.isPlanning());
        QTemporaryDir out;
        const QString target = out.filePath(QStringLiteral("copy/model.onnx"));
        QVERIFY(QDir().mkpath(out.filePath(QStringLiteral("copy"))));
        QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
        QVERIFY(window.saveTo(target));
        QVERIFY(finished.wait(30000));
        QVERIFY2(finished.constFirst().value(0).toBool(),
            qPrintable(answerer.texts.isEmpty() ? QString() : answerer.texts.constFirst()));
        // The window follows the local copy, which it may save in place (Ctrl+S saves again).
        QCOMPARE(window.currentPath(), QFileInfo(target).absoluteFilePath());
        QVERIFY(!window.isReadOnly());
        QCOMPARE(window.saveAction()->shortcut(), QKeySequence(QKeySequence::Save));
        QCOMPARE(
            window.saveAsAction()->shortcuts(), QKeySequence::keyBindings(QKeySequence::SaveAs));
        // The copy is the served model's bytes: the tensors of the local original.
        auto copy = repack::Model::load(target.toStdString());
        QVERIFY2(copy, copy ? "" : copy.error().message.c_str());
        auto original = repack::Model::load(m_local.toStdString());
        QVERIFY(original);
        QCOMPARE((*copy)->tensors().size(), (*original)->tensors().size());
        for (size_t i = 0; i < (*copy)->tensors().size(); ++i) {
            auto a = (*copy)->read(i);
            auto b = (*original)->read(i);
            QVERIFY(a && b);
            QVERIFY(a->bytes().size() == b->bytes().size()
                && std::equal(a->bytes().begin(), a->bytes().end(), b->bytes().begin()));
        }
    }

    // A served data file with a range no tensor reads: a local copy keeping tensors where they
    // are compacts it, holding only the bytes its tensors read, never that range as zeros.
    void aCopyKeepingPlacementHoldsOnlyTheBytesTensorsRead()
    {
        SKIP_WITHOUT_NGINX();
        const QString dir = qs((m_nginx.www() / "orphaned").string());
        QVERIFY(QDir().mkpath(dir));
        // Junk no tensor reads between the two tensors.
        QVERIFY(!fixtures::writeTensorsAtZeroAnd64KiB(dir, QStringLiteral("model.onnx"), 3000, true)
                     .isEmpty());

        DialogAnswerer answerer;
        ui::MainWindow window;
        QVERIFY(opens(window, qs(m_nginx.url("orphaned/model.onnx"))));
        QTRY_VERIFY(!window.isPlanning());
        QCOMPARE(window.snapshot().layouts.size(), size_t(1));
        QVERIFY(window.snapshot().layouts[0].orphanedBytes > 0);
        window.repackPanel()->keepBox()->setChecked(true);
        QCOMPARE(window.repackPanel()->compactButton()->text(), QStringLiteral("Compact (all)"));
        QTRY_VERIFY(!window.isPlanning());
        QTemporaryDir out;
        const QString target = out.filePath(QStringLiteral("model.onnx"));
        QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
        QVERIFY(window.saveTo(target));
        QVERIFY(finished.wait(30000));
        QVERIFY2(finished.constFirst().value(0).toBool(),
            qPrintable(answerer.texts.isEmpty() ? QString() : answerer.texts.constFirst()));

        auto copy = repack::Model::load(target.toStdString());
        QVERIFY2(copy, copy ? "" : copy.error().message.c_str());
        const auto layouts = repack::computeLayout(**copy, 4096);
        QCOMPARE(layouts.size(), size_t(1));
        QCOMPARE(layouts[0].location, std::string("w.bin"));
        QCOMPARE(layouts[0].orphanedBytes, uint64_t(0));
        QVERIFY2(layouts[0].bytes < 65536, qPrintable(QString::number(layouts[0].bytes)));
        auto served
            = repack::Model::load(QDir(dir).filePath(QStringLiteral("model.onnx")).toStdString());
        QVERIFY(served);
        for (size_t i = 0; i < 2; ++i) {
            auto was = (*served)->read(i);
            auto is = (*copy)->read(i);
            QVERIFY(was && is);
            QVERIFY(std::ranges::equal(was->bytes(), is->bytes()));
        }
        const QString why = fixtures::onnxLoadFailure(target);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        // The window follows the local copy, which compacts only when asked.
        QCOMPARE(window.repackPanel()->compactButton()->text(), QStringLiteral("Compact"));
    }

    void comparesWithALocalModel()
    {
        SKIP_WITHOUT_NGINX();
        DialogAnswerer answerer;
        ui::MainWindow window;
        QVERIFY(opens(window, m_url));
        ui::CompareWindow* compare = window.compareWith(m_local);
        QVERIFY(compare);
        QSignalSpy finished(compare, &ui::CompareWindow::finished);
        QVERIFY(finished.wait(30000));
        QVERIFY2(finished.constFirst().value(0).toBool(), qPrintable(compare->lastError()));
        const auto diff = compare->layoutDiff();
        QVERIFY(diff);
        QCOMPARE(diff->tensors.size(), size_t(6));
        QCOMPARE(diff->count(ui::ChangeKind::Unchanged), size_t(6));
        compare->close();
    }

    void cancelDuringAStalledFetchLeavesTheWindowAsItWas()
    {
        SKIP_WITHOUT_NGINX();
        // The model's HEAD is answered; its bytes never come.
        std::atomic<bool> stalled{false};
        const std::string size = std::to_string(fs::file_size(m_local.toStdString()));
        fixtures::FaultServer server([&](int socket, const fixtures::FaultRequest& request, int) {
            if (request.method == "HEAD") {
                fixtures::FaultServer::respond(socket, "200 OK",
                    {"Content-Length: " + size, "ETag: \"v1\"", "Accept-Ranges: bytes"}, {});
                return;
            }
            stalled = true;
            server.stall(socket);
        });
        DialogAnswerer answerer;
        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(opens(window, m_local));
        const QStringList before = tableRows(window);
        QSignalSpy failed(&window, &ui::MainWindow::openFailed);
        QSignalSpy openedSpy(&window, &ui::MainWindow::modelOpened);
        QVERIFY(window.openUrl(qs(server.url("m/model.onnx"))));
        QVERIFY(QTest::qWaitFor([&] { return stalled.load(); }, 10000));
        QVERIFY(window.isLoading());
        // The status bar's Cancel, as a user clicks it.
        QPushButton* cancel = nullptr;
        for (QPushButton* button : window.statusBar()->findChildren<QPushButton*>())
            if (button->text() == QStringLiteral("Cancel") && button->isVisible())
                cancel = button;
        QVERIFY2(cancel, "no Cancel in the status bar while a URL is fetched");
        QElapsedTimer clock;
        clock.start();
        QTest::mouseClick(cancel, Qt::LeftButton);
        QVERIFY(!window.isLoading());
        // The worker's fetch stops too (libcurl's progress callback), not after a timeout.
        QTRY_COMPARE_WITH_TIMEOUT(QThreadPool::globalInstance()->activeThreadCount(), 0, 2000);
        QVERIFY2(clock.elapsed() < 2000, qPrintable(QString::number(clock.elapsed())));
        server.stop();
        QTest::qWait(100);
        QVERIFY(openedSpy.isEmpty());
        QVERIFY(failed.isEmpty());
        QVERIFY(answerer.titles.isEmpty());
        QCOMPARE(window.currentPath(), QFileInfo(m_local).absoluteFilePath());
        QCOMPARE(tableRows(window), before);
        QVERIFY(!window.isReadOnly());
        QVERIFY(!cancel->isVisible());
    }

    // The opener reports the bytes of the structure fetched while the rest of the opening (here
    // a data file's HEAD that takes 800 ms) goes on.
    void reportsTheBytesFetched()
    {
        SKIP_WITHOUT_NGINX();
        std::string model;
        {
            std::ifstream in(m_local.toStdString(), std::ios::binary);
            model.assign(std::istreambuf_iterator<char>(in), {});
        }
        const std::string size = std::to_string(model.size());
        const auto weights
            = fs::file_size(fs::path(m_local.toStdString()).parent_path() / "weights.bin");
        fixtures::FaultServer server([&](int socket, const fixtures::FaultRequest& request, int) {
            if (request.target.ends_with("weights.bin")) {
                std::this_thread::sleep_for(std::chrono::milliseconds(800));
                fixtures::FaultServer::respond(socket, "200 OK",
                    {"Content-Length: " + std::to_string(weights), "ETag: \"w\""}, {});
                return;
            }
            if (request.method == "HEAD") {
                fixtures::FaultServer::respond(
                    socket, "200 OK", {"Content-Length: " + size, "ETag: \"m\""}, {});
                return;
            }
            const auto [first, asked] = request.range.value();
            const uint64_t last = std::min<uint64_t>(asked, model.size() - 1); // as nginx cuts
            fixtures::FaultServer::respond(socket, "206 Partial Content",
                {"Content-Range: bytes " + std::to_string(first) + "-" + std::to_string(last) + "/"
                        + size,
                    "ETag: \"m\""},
                std::string_view(model).substr(first, last - first + 1));
        });
        ui::ModelOpener opener;
        QSignalSpy progress(&opener, &ui::ModelOpener::progress);
        QSignalSpy done(&opener, &ui::ModelOpener::opened);
        QSignalSpy failed(&opener, &ui::ModelOpener::failed);
        opener.open(qs(server.url("m/model.onnx")), true);
        QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty() || !failed.isEmpty(); }, 20000));
        QVERIFY2(failed.isEmpty(), qPrintable(failed.value(0).value(1).toString()));
        QVERIFY(!progress.isEmpty());
        QCOMPARE(progress.constLast().value(0).toULongLong(), quint64(model.size()));
        QCOMPARE(progress.constLast().value(1).toULongLong(), quint64(model.size()));
    }

    void aBadUrlIsRefusedNamingIt_data()
    {
        QTest::addColumn<QString>("url");
        QTest::addRow("unknown scheme") << QStringLiteral("ftp://host/m/model.onnx");
        QTest::addRow("Hub repository without its organisation")
            << QStringLiteral("hf://model.onnx");
        QTest::addRow("local path") << QStringLiteral("/tmp/model.onnx");
    }

    void aBadUrlIsRefusedNamingIt()
    {
        QFETCH(QString, url);
        ui::OpenUrlDialog dialog({});
        dialog.setUrl(url);
        QVERIFY2(dialog.error().contains(url), qPrintable(dialog.error()));
        QVERIFY(!dialog.openButton()->isEnabled());
        DialogAnswerer answerer;
        ui::MainWindow window;
        QSignalSpy failed(&window, &ui::MainWindow::openFailed);
        QVERIFY(!window.openUrl(url));
        QCOMPARE(failed.size(), 1);
        QVERIFY2(window.lastError().contains(url), qPrintable(window.lastError()));
        QTRY_COMPARE(answerer.titles.size(), 1);
        QVERIFY(!window.isLoading());
    }

    void aGoodUrlIsAccepted()
    {
        ui::OpenUrlDialog dialog({QStringLiteral("hf://org/repo/model.onnx")});
        dialog.setUrl(QStringLiteral("s3://bucket/m/model.onnx"));
        QCOMPARE(dialog.error(), QString());
        QVERIFY(dialog.openButton()->isEnabled());
        QCOMPARE(dialog.urlBox()->count(), 1);
    }

    void aMissingModelIsAnErrorNamingIt()
    {
        SKIP_WITHOUT_NGINX();
        DialogAnswerer answerer;
        ui::MainWindow window;
        const QString url = qs(m_nginx.url("m/absent.onnx"));
        QString error;
        QVERIFY(!opens(window, url, &error));
        QVERIFY2(error.contains(url), qPrintable(error));
        QTRY_COMPARE(answerer.titles.size(), 1);
        QVERIFY(answerer.texts.constFirst().contains(url));
    }

    // File > Open URL… of a folder of the Hub (hf://ORG/REPO/onnx, or the Hub's own link to it
    // with a query) opens a folder window showing what a folder window of the same files on disk
    // shows: the graphs, the data files and the graphs that read them, the weights stored twice,
    // the problems; inspectFolder of the local copy says as much. Neither its title nor File >
    // Open Recent shows the query.
    void aHubFolderOpensAsItsLocalCopy()
    {
        HubCase c;
        c.useSharedWeights();
        DialogAnswerer answerer;
        ui::MainWindow window;
        const QString url = QStringLiteral(
            "https://huggingface.co/org/repo/tree/main/onnx?X-Amz-Signature=secret123");
        ui::FolderWindow* folder = openedFolder(window, url);
        QVERIFY2(folder, qPrintable(window.lastError()));
        QVERIFY(answerer.titles.isEmpty());
        QVERIFY(folder->isReadOnly());
        ui::FolderWindow local;
        QSignalSpy localDone(&local, &ui::FolderWindow::inspected);
        local.openFolder(c.localFolder());
        QVERIFY(localDone.wait(20000));
        QVERIFY2(localDone.constFirst().value(0).toBool(), qPrintable(local.lastError()));
        auto onDisk = repack::inspectFolder(c.localFolder().toStdString());
        QVERIFY(onDisk);
        QCOMPARE(folder->graphsTable()->rowCount(), int(onDisk->models.size()));
        QCOMPARE(folder->filesTable()->rowCount(), int(onDisk->files.size()));
        QCOMPARE(folder->sharedTable()->rowCount(), int(onDisk->shared.size()));
        QVERIFY(folder->sharedTable()->rowCount() > 0);
        QCOMPARE(folder->problemsTable()->rowCount(), int(onDisk->problems.size()));
        for (int r = 0; r < folder->graphsTable()->rowCount(); ++r)
            QCOMPARE(folder->graphsTable()->item(r, 0)->text(), qs(onDisk->models[size_t(r)].name));
        const QString pinned = qs("hf://org/repo@" + fixtures::kHubCommit + "/onnx/");
        const QString localName = c.localFolder() + u'/';
        for (const auto& [remote, disk] : {std::pair{folder->graphsTable(), local.graphsTable()},
                 std::pair{folder->filesTable(), local.filesTable()},
                 std::pair{folder->sharedTable(), local.sharedTable()},
                 std::pair{folder->problemsTable(), local.problemsTable()}})
            QCOMPARE(tableText(remote).replace(pinned, localName), tableText(disk));
        QVERIFY2(folder->windowTitle().startsWith(QStringLiteral("Folder onnx (hf://org/repo)")),
            qPrintable(folder->windowTitle()));
        QVERIFY(!folder->windowTitle().contains(QStringLiteral("secret123")));
        // The summary names the folder at the commit its graphs were read at.
        bool pinnedNamed = false;
        for (const QLabel* label : folder->findChildren<QLabel*>())
            pinnedNamed = pinnedNamed || label->text().startsWith(pinned + u':');
        QVERIFY(pinnedNamed);
        ui::waitForSettingsWritten();
        const QStringList recent = QSettings().value(QStringLiteral("recentFiles")).toStringList();
        QCOMPARE(recent.value(0), QStringLiteral("hf://org/repo/onnx/"));
        QVERIFY(!recent.join(u' ').contains(QStringLiteral("secret123")));
        folder->close();
    }

    // File > Open URL… of a Hub model whose data file's resolve redirects to another host
    // spelled "http:/HOST:PORT/..." (one slash): the transport reads that as another origin, so
    // the request it makes there carries no token.
    void openUrlNeverSendsTheTokenWhereAHubRedirects()
    {
        HubCase c;
        fixtures::FaultServer elsewhere(
            [](int socket, const fixtures::FaultRequest&, int) {
                fixtures::FaultServer::respond(socket, "404 Not Found", {}, "");
            },
            "127.0.0.2");
        c.hub.lfsLocation = "http:/127.0.0.2:" + std::to_string(elsewhere.port()) + "/steal";
        DialogAnswerer answerer;
        ui::MainWindow window;
        QString error;
        opens(window, QStringLiteral("hf://org/repo/onnx/encoder_model.onnx"), &error);
        QVERIFY(!elsewhere.requests().empty()); // the data file was asked there
        for (const auto& request : elsewhere.requests())
            QVERIFY2(request.header("authorization").empty(), request.target.c_str());
        QVERIFY(!error.contains(QString::fromStdString(fixtures::kHubToken)));
    }

    // A folder of the Hub is read where it lives: its shared save is disabled, saying how a
    // local copy of it is made instead.
    void aHubFolderIsReadOnlySayingWhy()
    {
        HubFolderCase h;
        ui::FolderWindow* folder = h.folder;
        QVERIFY2(folder, qPrintable(h.window.lastError()));
        QVERIFY(!folder->saveButton()->isEnabled());
        // The command copies what the window shows: the folder at the commit it was read at.
        const QString command
            = qs("onnx-repack repack hf://org/repo@" + fixtures::kHubCommit + "/onnx/ -o DIR ")
            + QStringLiteral("--shared-data ") + folder->sharedNameEdit()->text();
        QVERIFY2(folder->saveButton()->toolTip().contains(command),
            qPrintable(folder->saveButton()->toolTip()));
        QVERIFY2(folder->savingsLabel()->text().contains(QStringLiteral("read-only")),
            qPrintable(folder->savingsLabel()->text()));
        // ... and points at the window's own way to a local copy.
        QVERIFY2(folder->savingsLabel()->text().contains(QStringLiteral("Save a Local Copy…")),
            qPrintable(folder->savingsLabel()->text()));
        QVERIFY(folder->saveCopyButton()->isVisibleTo(folder));
        // The command, however long, never widens the window past a 1024 px screen: it wraps
        // (xvfb's fonts made the window 1152 px wide at 1024 before).
        const QLabel* savings = folder->savingsLabel();
        QVERIFY(savings->minimumSizeHint().width()
            < savings->fontMetrics().horizontalAdvance(savings->text()) / 2);
        // Saving anyway (a caller, a shortcut) writes nothing and says why.
        QSignalSpy saved(folder, &ui::FolderWindow::saved);
        folder->saveShared(QStringLiteral("model.onnx_data"));
        QTest::qWait(100);
        QVERIFY(saved.isEmpty());
        QVERIFY(!folder->isBusy());
        QVERIFY(h.answerer.titles.isEmpty());
        folder->close();
    }

    // "Save a Local Copy…" of a folder of the Hub writes, file for file and byte for byte, what
    // the core's shared save of the folder's download writes into another folder with the same
    // shared name; onnx.load reads each graph; the window says what it wrote and where.
    void aHubFolderSavesALocalCopyAsItsDownloadSaves()
    {
        HubFolderCase h(true);
        ui::FolderWindow* folder = h.folder;
        QVERIFY2(folder, qPrintable(h.window.lastError()));
        QVERIFY(folder->saveCopyButton()->isVisibleTo(folder));
        QVERIFY(folder->saveCopyButton()->isEnabled());
        QVERIFY(!folder->saveButton()->isEnabled());
        const QString copy = h.c.dir.filePath(QStringLiteral("copy"));
        QVERIFY(QDir().mkpath(copy));
        QVERIFY2(savesLocalCopy(*folder, copy, QStringLiteral("shared.onnx_data")),
            qPrintable(folder->lastError()));
        QVERIFY(h.answerer.titles.isEmpty());
        QVERIFY2(folder->savingsLabel()->text().contains(copy),
            qPrintable(folder->savingsLabel()->text()));
        QVERIFY(!folder->saveButton()->isEnabled());
        QVERIFY(folder->saveCopyButton()->isEnabled());
        const QString why = differsFromSaveOf(h.c.localFolder(), copy, "shared.onnx_data");
        QVERIFY2(why.isEmpty(), qPrintable(why));
        folder->close();
    }

    // "Save a Local Copy…" copies the commit the window shows, never the branch again: a push
    // between the reading and the copy (one graph of three removed) changes nothing of it, and
    // the window names the commit copied.
    void aLocalCopyIsOfTheCommitTheWindowShows()
    {
        HubFolderCase h;
        ui::FolderWindow* folder = h.folder;
        QVERIFY2(folder, qPrintable(h.window.lastError()));
        QCOMPARE(folder->graphsTable()->rowCount(), 3);
        h.c.hub.removedByPush = {"onnx/encoder_model.onnx", "onnx/encoder_model.onnx_data"};
        h.c.hub.pushed = true;
        const QString copy = h.c.dir.filePath(QStringLiteral("copy"));
        QVERIFY(QDir().mkpath(copy));
        QVERIFY2(savesLocalCopy(*folder, copy, QStringLiteral("model.onnx_data")),
            qPrintable(folder->lastError()));
        const QString why = differsFromSaveOf(h.c.localFolder(), copy, "model.onnx_data");
        QVERIFY2(why.isEmpty(), qPrintable(why));
        QVERIFY(fs::exists(copy.toStdString() + "/encoder_model.onnx"));
        const QString pinned = qs("hf://org/repo@" + fixtures::kHubCommit + "/onnx/");
        QVERIFY2(folder->savingsLabel()->text().contains(pinned),
            qPrintable(folder->savingsLabel()->text()));
        QVERIFY(h.answerer.titles.isEmpty());
        folder->close();
    }

    // Cancel while the local copy reads the Hub's data (the CDN never answers): the save
    // stops, nothing is said as an error, and the output folder holds no file.
    void cancelOfALocalCopyLeavesTheOutputEmpty()
    {
        HubFolderCase h(true);
        ui::FolderWindow* folder = h.folder;
        QVERIFY2(folder, qPrintable(h.window.lastError()));
        const QString copy = h.c.dir.filePath(QStringLiteral("copy"));
        QVERIFY(QDir().mkpath(copy));
        h.c.hub.stallCdn = true;
        QSignalSpy done(folder, &ui::FolderWindow::copySaved);
        folder->saveLocalCopy(copy, QStringLiteral("model.onnx_data"));
        QVERIFY(QTest::qWaitFor([&] { return h.c.hub.cdnStalls > 0 || !done.isEmpty(); }, 20000));
        QVERIFY(done.isEmpty());
        QVERIFY(folder->isBusy());
        QVERIFY(folder->cancelButton()->isEnabled());
        QVERIFY(!folder->saveCopyButton()->isEnabled());
        QTest::mouseClick(folder->cancelButton(), Qt::LeftButton);
        QVERIFY(done.wait(5000));
        QVERIFY(!done.constFirst().value(0).toBool());
        QCOMPARE(folder->lastError(), QString());
        QVERIFY(h.answerer.titles.isEmpty());
        QVERIFY2(folder->savingsLabel()->text().contains(QStringLiteral("cancelled")),
            qPrintable(folder->savingsLabel()->text()));
        QVERIFY(fs::is_directory(copy.toStdString()));
        QVERIFY(fs::is_empty(copy.toStdString()));
        QVERIFY(!folder->isBusy());
        QVERIFY(folder->saveCopyButton()->isEnabled());
        folder->close();
    }

    void theProgressSaysWhatRemoteWorkWaitsFor_data() { remoteWorkRows(); }

    // Each window that runs remote work shows, beside its busy bar, what the command's token
    // was told it waits for (the transport tells it from the worker while a request waits), no
    // more once it waits no more, and nothing once the command is cancelled.
    void theProgressSaysWhatRemoteWorkWaitsFor()
    {
        QFETCH(int, kind);
        RemoteWork work(RemoteWork::Kind(kind), Hold::Stall);
        QVERIFY2(work.start(), qPrintable(work.why));
        QVERIFY(work.token);
        QLabel* label = work.waitLabel();
        QVERIFY(label);
        QVERIFY(label->text().isEmpty());
        const std::string what = "127.0.0.1:" + std::to_string(work.server.port())
            + ": model.onnx, attempt 2 of 5 (HTTP 503), next in 4 s";
        const QString shown = QStringLiteral("Waiting for ") + qs(what);
        sayFromWorker(*work.token, what);
        QTRY_COMPARE(label->text(), shown);
        QVERIFY(label->isVisibleTo(work.shownIn()));
        QCOMPARE(label->toolTip(), shown);
        sayFromWorker(*work.token, "");
        QTRY_COMPARE(label->text(), QString());
        QVERIFY(!label->isVisibleTo(work.shownIn()));
        sayFromWorker(*work.token, what);
        QTRY_COMPARE(label->text(), shown);
        QPushButton* cancel = work.cancelButton();
        QVERIFY(cancel);
        QTest::mouseClick(cancel, Qt::LeftButton);
        QVERIFY(work.token->isCancelled()); // the token watched is the one Cancel stops
        // The servers hang up: the worker hears the cancel at once, not at curl's next progress
        // call on a silent transfer (the retry test below times Cancel).
        work.server.stop();
        work.hub.hub.server.stop();
        QTRY_VERIFY_WITH_TIMEOUT(work.isOver(), 2000);
        // The window still open (the folder window of a reading cancelled closes) waits for
        // nothing.
        QCOMPARE(work.waitLabel()->text(), QString());
        QVERIFY2(work.answerer.titles.isEmpty(), qPrintable(work.answerer.texts.join(u'\n')));
    }

    void cancelDuringARetryWaitStopsWithinASecond_data() { remoteWorkRows(); }

    // A server that answers 503 with Retry-After: 30 holds each window's remote work in the
    // transport's wait before asking again: Cancel ends it, worker and all, within a second,
    // with nothing said as an error and no second request.
    void cancelDuringARetryWaitStopsWithinASecond()
    {
        QFETCH(int, kind);
        RemoteWork work(RemoteWork::Kind(kind), Hold::RetryLater);
        QVERIFY2(work.start(), qPrintable(work.why));
        QTest::qWait(300); // the answer is in: the transport waits
        QVERIFY(!work.isOver());
        const int asked = work.asked + work.hub.hub.cdnBusyAnswers;
        QPushButton* cancel = work.cancelButton();
        QVERIFY(cancel);
        QElapsedTimer clock;
        clock.start();
        QTest::mouseClick(cancel, Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(work.isOver(), 1000);
        QVERIFY2(clock.elapsed() < 1000, qPrintable(QString::number(clock.elapsed())));
        QCOMPARE(work.asked + work.hub.hub.cdnBusyAnswers, asked);
        QCOMPARE(work.waitLabel()->text(), QString());
        QVERIFY2(work.answerer.titles.isEmpty(), qPrintable(work.answerer.texts.join(u'\n')));
    }

    // A local copy into the Hugging Face cache ($HF_HUB_CACHE) is the core's refusal, an
    // error naming the folder chosen, with nothing written there.
    void aLocalCopyIntoTheHubCacheIsRefused()
    {
        HubFolderCase h;
        ui::FolderWindow* folder = h.folder;
        QVERIFY2(folder, qPrintable(h.window.lastError()));
        const QString inCache = h.c.dir.filePath(QStringLiteral("cache/elsewhere"));
        QVERIFY(QDir().mkpath(inCache));
        QVERIFY(!savesLocalCopy(*folder, inCache, QStringLiteral("model.onnx_data")));
        const QString error = folder->lastError();
        QVERIFY2(error.contains(inCache) && error.contains(QStringLiteral("Hugging Face cache")),
            qPrintable(error));
        QTRY_COMPARE(h.answerer.titles.size(), 1);
        QCOMPARE(h.answerer.titles.constFirst(), QStringLiteral("Cannot save a local copy"));
        QVERIFY(h.answerer.texts.constFirst().contains(inCache));
        QVERIFY(fs::is_empty(inCache.toStdString()));
        QVERIFY(!folder->isBusy());
        folder->close();
    }

    // A Hub that never answers the listing: the folder window's Cancel stops the reading
    // within a second (the worker too), no error is said, and the main window opens the next
    // URL as ever.
    void cancelOfAStalledListingLeavesTheWindowUsable()
    {
        std::atomic<bool> stalled{false};
        fixtures::FaultServer server([&](int socket, const fixtures::FaultRequest&, int) {
            stalled = true;
            server.stall(socket);
        });
        qputenv("HF_ENDPOINT", "http://127.0.0.1:" + QByteArray::number(server.port()));
        DialogAnswerer answerer;
        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy failed(&window, &ui::MainWindow::openFailed);
        QVERIFY(window.openUrl(QStringLiteral("hf://org/repo/onnx")));
        QVERIFY(QTest::qWaitFor([&] { return stalled.load(); }, 10000));
        QPointer<ui::FolderWindow> folder = window.findChild<ui::FolderWindow*>();
        QVERIFY(folder);
        QVERIFY(folder->isBusy());
        QVERIFY(folder->cancelButton()->isEnabled());
        QVERIFY(folder->cancelButton()->isVisible());
        QElapsedTimer clock;
        clock.start();
        QTest::mouseClick(folder->cancelButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!folder, 1000);
        QTRY_COMPARE_WITH_TIMEOUT(QThreadPool::globalInstance()->activeThreadCount(), 0, 1000);
        QVERIFY2(clock.elapsed() < 1000, qPrintable(QString::number(clock.elapsed())));
        server.stop();
        QTest::qWait(100);
        QVERIFY(failed.isEmpty());
        QVERIFY(answerer.titles.isEmpty());
        QVERIFY(!window.isLoading());
        // Still usable: the next folder opens.
        HubCase c;
        QVERIFY2(openedFolder(window, QStringLiteral("hf://org/repo/onnx")),
            qPrintable(window.lastError()));
    }

    // File > Open Recent's entry of a folder of the Hub opens it again as a folder.
    void aRecentHubFolderReopensAsAFolder()
    {
        HubCase c;
        DialogAnswerer answerer;
        ui::MainWindow window;
        ui::FolderWindow* first = openedFolder(window, QStringLiteral("hf://org/repo/onnx"));
        QVERIFY2(first, qPrintable(window.lastError()));
        first->close();
        QTRY_VERIFY(!window.findChild<ui::FolderWindow*>());
        auto* menu = window.findChild<QMenu*>(QStringLiteral("recentMenu"));
        QVERIFY(menu);
        QAction* entry = nullptr;
        for (QAction* action : menu->actions())
            if (action->toolTip() == QStringLiteral("hf://org/repo/onnx"))
                entry = action;
        QVERIFY(entry);
        QCOMPARE(entry->text(), QStringLiteral("onnx (hf://org/repo)"));
        QSignalSpy failed(&window, &ui::MainWindow::openFailed);
        entry->trigger();
        ui::FolderWindow* again = nullptr;
        QVERIFY(QTest::qWaitFor(
            [&] {
                again = window.findChild<ui::FolderWindow*>();
                return !failed.isEmpty() || (again && !again->isBusy());
            },
            20000));
        QVERIFY2(failed.isEmpty(), qPrintable(window.lastError()));
        QCOMPARE(again->graphsTable()->rowCount(), 3);
        QVERIFY(answerer.titles.isEmpty());
        again->close();
    }

    // `onnx-repack-gui hf://ORG/REPO/onnx` (and a drop of such a name) opens a folder window.
    void aHubFolderNamedToTheAppOpensAsAFolder()
    {
        HubCase c;
        DialogAnswerer answerer;
        const QList<QWidget*> windows = ui::openWindows({QStringLiteral("hf://org/repo/onnx")});
        QCOMPARE(windows.size(), 1);
        QPointer<ui::FolderWindow> folder = qobject_cast<ui::FolderWindow*>(windows.front());
        QVERIFY(folder);
        QSignalSpy done(folder.data(), &ui::FolderWindow::inspected);
        QVERIFY(done.wait(20000));
        QVERIFY2(done.constFirst().value(0).toBool(), qPrintable(folder->lastError()));
        QCOMPARE(folder->graphsTable()->rowCount(), 3);
        QVERIFY(folder->isReadOnly());
        QVERIFY(answerer.titles.isEmpty());
        folder->close();
        QTRY_VERIFY(!folder);
    }

    // A folder the Hub refuses (no such repository: 404; a gated one: 401) is an error naming
    // it without its query, and no folder window is left, filled or not.
    void aRefusedHubFolderIsAnErrorNamingIt_data()
    {
        QTest::addColumn<QString>("url");
        QTest::addColumn<bool>("gated");
        QTest::addColumn<QString>("named");
        QTest::addColumn<QString>("why");
        QTest::addRow("404") << QStringLiteral(
            "https://huggingface.co/org/none/tree/main/onnx?secret123=1")
                             << false << QStringLiteral("hf://org/none/onnx")
                             << QStringLiteral("no such repository");
        QTest::addRow("401") << QStringLiteral("hf://org/repo/onnx/") << true
                             << QStringLiteral("hf://org/repo/onnx/") << QStringLiteral("gated");
    }

    void aRefusedHubFolderIsAnErrorNamingIt()
    {
        QFETCH(QString, url);
        QFETCH(bool, gated);
        QFETCH(QString, named);
        QFETCH(QString, why);
        HubCase c;
        c.hub.gated = gated;
        DialogAnswerer answerer;
        ui::MainWindow window;
        QSignalSpy failed(&window, &ui::MainWindow::openFailed);
        QVERIFY(window.openUrl(url));
        QVERIFY(QTest::qWaitFor([&] { return !failed.isEmpty(); }, 20000));
        const QString error = failed.constFirst().value(1).toString();
        QVERIFY2(error.contains(named) && error.contains(why), qPrintable(error));
        QVERIFY2(!error.contains(QStringLiteral("secret123")), qPrintable(error));
        QCOMPARE(window.lastError(), error);
        QTRY_COMPARE(answerer.titles.size(), 1);
        QCOMPARE(answerer.titles.constFirst(), QStringLiteral("Cannot open folder"));
        QVERIFY(answerer.texts.constFirst().contains(named));
        QTRY_VERIFY(!window.findChild<ui::FolderWindow*>());
        QVERIFY(!window.isLoading());
    }

    void theMenuHasOpenUrl()
    {
        ui::MainWindow window;
        auto* action = window.findChild<QAction*>(QStringLiteral("openUrlAction"));
        QVERIFY(action);
        QVERIFY(action->isEnabled());
        QCOMPARE(action->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_L));
    }
};

QTEST_MAIN(TestOpenUrl)
#include "tst_open_url.moc"
