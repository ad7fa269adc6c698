// Answers the modal message boxes a UI test makes the window ask, so no test hangs on one: it
// clicks the button with the text it was given (mnemonic '&' ignored) and records what each
// dialog said. With no such button the dialog is closed (Esc, as a user backing out).
#pragma once

#include <QAbstractButton>
#include <QApplication>
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
    QStringList m_next;
};
