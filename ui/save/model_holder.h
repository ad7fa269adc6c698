// The windows that show a model, found by the model's file: a save that writes models other
// windows show (the folder save, ui/windows/folder_window.h) goes through each one's ModelOwner. It
// borrows the window's write lease for as long as it writes, so the window runs no job on the
// model and stops watching its files meanwhile; it gives the lease back when it is done, and
// the window loads what is on disk then (asking first only when it has work pending).
#pragma once

#include "model_owner.h"

#include <QList>
#include <QPointer>
#include <QString>

namespace ui {

class ModelHolder {
public:
    // The holders showing one of the model files `paths` (any spelling of the same file).
    // GUI thread only, like every call here.
    static QList<ModelHolder*> showing(const QStringList& paths);

    // The holder as an object, to tell whether it is still there (a window closed meanwhile).
    QPointer<QObject> self() const { return m_self; }
    // The model file shown (absolute), empty when none.
    virtual QString heldPath() const = 0;
    // Whose writable() a borrower waits for when lend() gave no lease.
    virtual ModelOwner& owner() = 0;
    // Why the model cannot be lent now (its own save, a load), for the user; empty when it can.
    virtual QString whyNotLend() const = 0;
    // Stops the holder's jobs on the model and its watch of the files, and asks its owner for
    // the write lease (ModelOwner::write): null while a reader lingers, then owner().writable()
    // says when to ask again.
    virtual ModelOwner::WriteLease lend() = 0;
    // The borrower gave the lease back (or gave up waiting for it); `rewritten`: it changed the
    // files on disk, which the holder loads again.
    virtual void giveBack(bool rewritten) = 0;

protected:
    explicit ModelHolder(QObject* self);
    virtual ~ModelHolder();
    ModelHolder(const ModelHolder&) = delete;
    ModelHolder& operator=(const ModelHolder&) = delete;

private:
    QPointer<QObject> m_self;
};

} // namespace ui
