// The steps UI suites take with a MainWindow: open a model and wait for it, wait for the plans
// made on workers, find a tensor's row.
#pragma once

#include "ui/windows/main_window.h"

#include <QSignalSpy>
#include <QTest>

namespace windowsteps {

// Waits until the window's plans are in: the checks of pin edits (each lands or is refused
// then) and the preview they lead to, all made on workers.
inline bool settled(ui::MainWindow& window)
{
    return QTest::qWaitFor([&window] { return !window.isPlanning(); }, 60000);
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

} // namespace windowsteps
