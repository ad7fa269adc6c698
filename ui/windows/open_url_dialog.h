// File > Open URL…: an address typed or picked from the URLs opened before (File > Open
// Recent's, which keep no secrets), checked as it is typed by the parser the CLI uses
// (repack::parseSource): what is not an http(s)://, hf:// or s3:// address says why below the
// field, and OK stays disabled.
#pragma once

#include <QDialog>

class QComboBox;
class QLabel;
class QPushButton;

namespace ui {

class OpenUrlDialog : public QDialog {
    Q_OBJECT
public:
    explicit OpenUrlDialog(const QStringList& recent, QWidget* parent = nullptr);

    QString url() const;
    void setUrl(const QString& url);
    // Why url() names no remote model ("" when it does, or when the field is empty).
    QString error() const;
    QComboBox* urlBox() const { return m_url; }
    QPushButton* openButton() const { return m_open; }

    // Why `text` names no model on a server; "" when it does (or is empty).
    static QString urlError(const QString& text);

private:
    void check();

    QComboBox* m_url;
    QLabel* m_error;
    QPushButton* m_open;
};

} // namespace ui
