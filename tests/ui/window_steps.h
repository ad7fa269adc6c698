// The steps UI suites take with a MainWindow: show it, open a model and wait for it, wait for
// the plans made on workers, find a tensor's row, save with the keyboard.
#pragma once

#include "ui/windows/main_window.h"

#include <QAction>
#include <QSignalSpy>
#include <QTest>

namespace windowsteps {

// Waits until the window's plans are in: the checks of pin edits (each lands or is refused
// then) and the preview they lead to, all made on workers.
inline bool settled(ui::MainWindow& window)
{
    return QTest::qWaitFor([&window] { return !window.isPlanning(); }, 60000);
}

// Shown at a desktop size and active, so its shortcuts (Ctrl+S, Ctrl+E) and tooltips work.
inline bool showActive(ui::MainWindow& window)
{
    window.resize(1280, 800);
    window.show();
    return QTest::qWaitForWindowActive(&window);
}

inline bool open(ui::MainWindow& window, const QString& path)
{
    QSignalSpy opened(&window, &ui::MainWindow::modelOpened);
    return window.openFile(path, true) && opened.wait(60000) && settled(window);
}

// The index of the tensor `name` in the window's snapshot; -1 when there is none.
inline int tensorOf(const ui::MainWindow& window, const QString& name)
{
    const auto& rows = window.snapshot().tensors;
    for (int i = 0; i < rows.size(); ++i)
        if (rows[i].name == name)
            return i;
    return -1;
}

// Saves with Ctrl+S once the preview of the options as they are now (made a moment after an
// edit) enables Save; true when the save succeeded and the views have settled.
inline bool saveWithKeys(ui::MainWindow& window)
{
    if (!QTest::qWaitFor([&window] { return window.saveAction()->isEnabled(); }, 60000))
        return false;
    QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
    QTest::keyClick(&window, Qt::Key_S, Qt::ControlModifier);
    return finished.wait(60000) && finished.constFirst().constFirst().toBool() && settled(window);
}

} // namespace windowsteps
