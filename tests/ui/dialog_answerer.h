// Answers the modal message boxes a UI test makes the window ask, so no test hangs on one: it
// clicks the button with the text it was given (mnemonic '&' ignored) and records what each
// dialog said. With no such button the dialog is closed (Esc, as a user backing out). A file
// dialog is answered with the file given to saveFileAs, else closed.
#pragma once

#include <QAbstractButton>
#include <QApplication>
#include <QFileDialog>
#include <QLineEdit>
#include <QMessageBox>
#include <QTimer>

class DialogAnswerer : public QObject {
public:
    explicit DialogAnswerer(QString button = {})
        : m_button(std::move(button))
    {
        start();
    }
    // The first dialog answered with buttons[0], the next with buttons[1], ..., the last button
    // for every dialog after.
    explicit DialogAnswerer(QStringList buttons)
        : m_button(buttons.value(0))
        , m_next(buttons.mid(1))
    {
        start();
    }
    void setButton(const QString& button) { m_button = button; }
    // The file a file dialog chooses (it is accepted); empty: it is closed.
    void saveFileAs(const QString& path) { m_file = path; }

    QStringList titles; // each dialog's window title, in order
    QStringList texts; // each dialog's text and informative text
    QStringList buttons; // each dialog's buttons, '|'-joined, and '*' after a disabled one

private:
    void start()
    {
        m_timer.setInterval(20);
        connect(&m_timer, &QTimer::timeout, this, [this] { answer(); });
        m_timer.start();
    }

    void answer()
    {
        QWidget* modal = QApplication::activeModalWidget();
        if (!modal)
            return;
        auto* box = qobject_cast<QMessageBox*>(modal);
        titles << modal->windowTitle();
        if (auto* files = qobject_cast<QFileDialog*>(modal); files && !m_file.isEmpty()) {
            texts << QString();
            buttons << QString();
            // Typed, as a user does: selectFile leaves a focused name field as it is.
            if (auto* name = files->findChild<QLineEdit*>(QStringLiteral("fileNameEdit")))
                name->setText(m_file);
            static_cast<QDialog*>(files)->accept(); // QFileDialog::accept checks the name
            return;
        }
        texts << (box ? box->text() + u'\n' + box->informativeText() : QString());
        QStringList names;
        QAbstractButton* chosen = nullptr;
        for (QAbstractButton* b : box ? box->buttons() : QList<QAbstractButton*>()) {
            const QString name = b->text().remove(u'&');
            names << name + (b->isEnabled() ? QString() : QStringLiteral("*"));
            if (name == m_button && b->isEnabled())
                chosen = b;
        }
        buttons << names.join(u'|');
        if (!m_next.isEmpty())
            m_button = m_next.takeFirst();
        if (chosen)
            chosen->click();
        else
            modal->close();
    }

    QTimer m_timer;
    QString m_button;
    QString m_file;
    QStringList m_next;
};
