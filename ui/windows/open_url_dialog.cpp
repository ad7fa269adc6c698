#include "open_url_dialog.h"

#include "ui/util/display_name.h"

#include "core/io/source_spec.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace ui {

OpenUrlDialog::OpenUrlDialog(const QStringList& recent, QWidget* parent)
    : QDialog(parent)
    , m_url(new QComboBox(this))
    , m_error(new QLabel(this))
{
    setWindowTitle(tr("Open URL"));
    auto* prompt = new QLabel(tr("A model on a server, or a folder of graphs on the Hub "
                                 "(hf://ORG/REPO/onnx), opened read-only: its structure is "
                                 "fetched, its weights are read only when needed."),
        this);
    prompt->setWordWrap(true);
    m_url->setEditable(true);
    m_url->setInsertPolicy(QComboBox::NoInsert);
    m_url->setMinimumContentsLength(60);
    m_url->addItems(recent);
    m_url->setCurrentIndex(-1);
    m_url->lineEdit()->setPlaceholderText(
        QStringLiteral("hf://ORG/REPO[@REV]/model.onnx, https://HOST/model.onnx, s3://BUCKET/KEY"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->setStyleSheet(QStringLiteral("color: palette(link-visited)"));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel, this);
    m_open = buttons->button(QDialogButtonBox::Open);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_url, &QComboBox::editTextChanged, this, &OpenUrlDialog::check);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(prompt);
    layout->addWidget(m_url);
    layout->addWidget(m_error);
    layout->addWidget(buttons);
    check();
}

QString OpenUrlDialog::url() const
{
    return m_url->currentText().trimmed();
}

void OpenUrlDialog::setUrl(const QString& url)
{
    m_url->setEditText(url);
}

QString OpenUrlDialog::error() const
{
    return m_error->text();
}

QString OpenUrlDialog::urlError(const QString& text)
{
    const QString url = text.trimmed();
    if (url.isEmpty())
        return {};
    const auto spec = repack::parseSource(url.toStdString());
    if (!spec)
        return QString::fromStdString(spec.error().message);
    if (!spec->isRemote())
        return tr("%1 is not a URL (http(s)://, hf:// or s3://): File > Open… opens a local "
                  "file")
            .arg(url);
    return {};
}

void OpenUrlDialog::check()
{
    const QString why = urlError(url());
    m_error->setText(why);
    m_error->setVisible(!why.isEmpty());
    m_open->setEnabled(!url().isEmpty() && why.isEmpty());
}

} // namespace ui
