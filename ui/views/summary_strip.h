// The one-line overview above the table: tensor count, inline and external bytes, the data
// files, the .onnx size against protobuf's 2 GiB limit and orphaned bytes.
#pragma once

#include <QWidget>

class QLabel;

namespace ui {

struct ModelSnapshot;

class SummaryStrip : public QWidget {
    Q_OBJECT
public:
    explicit SummaryStrip(QWidget* parent = nullptr);

    void setSnapshot(const ModelSnapshot& snapshot);
    QString text() const; // plain text of every field, for tests and copying

private:
    QLabel* addField(const QString& title);

    QLabel* m_tensors;
    QLabel* m_inline;
    QLabel* m_external;
    QLabel* m_files;
    QLabel* m_protobuf;
    QLabel* m_orphaned;
};

} // namespace ui
