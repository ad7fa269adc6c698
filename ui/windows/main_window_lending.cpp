// MainWindow as a ModelHolder: a save of the model's folder borrows the model (the plans that
// read it end first, the watch on its files pauses) and gives it back, rewritten or not.
#include "main_window.h"

#include "ui/util/display_name.h"

#include <QTimer>

namespace ui {

QString MainWindow::heldPath() const
{
    // A model read from a URL holds no file a folder's save could write.
    return m_models.hasModel() && !isReadOnly() ? m_snapshot.path : QString();
}

QString MainWindow::whyNotLend() const
{
    const QString name = displayName(m_snapshot.path);
    if (isSaving())
        return tr("%1 is being saved in its window").arg(name);
    if (isLoading())
        return tr("a model is being opened in the window of %1").arg(name);
    return {};
}

ModelOwner::WriteLease MainWindow::lend()
{
    // The plans that read the model end first (as before a save of its own); the folder
    // save's own writes are not "changed on disk" by someone else.
    finishPlanning();
    m_changeTimer->stop();
    unwatchFiles();
    ModelOwner::WriteLease lease = m_models.write();
    setBusy(tr("Saving with its folder…"));
    return lease;
}

void MainWindow::giveBack(bool rewritten)
{
    if (m_models.writerWaits())
        m_models.withdraw(); // the borrower gave up waiting for a reader
    // Not inside the borrower's call: it may be closing, and asking opens a dialog.
    QTimer::singleShot(0, this, [this, rewritten] {
        if (isSaving())
            return; // lent again meanwhile: the next giveBack comes
        setBusy({});
        if (!rewritten) {
            watchFiles();
            updatePreview();
        } else if (hasPendingWork()) {
            askToReload(); // as for any change on disk: the pins and options would be lost
        } else {
            startOpen(m_snapshot.path, false); // the saved layout, nothing to lose
        }
    });
}

} // namespace ui
