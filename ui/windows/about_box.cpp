#include "about_box.h"

#include <QCoreApplication>
#include <QMessageBox>

namespace ui {

void showAbout(QWidget* parent)
{
    QMessageBox::about(parent, QCoreApplication::translate("ui::MainWindow", "About Onnx Repack"),
        QCoreApplication::translate("ui::MainWindow",
            "<h3>Onnx Repack %1</h3><p>See where every tensor of an ONNX model lives, "
            "and rewrite inline and external storage safely.</p>")
            .arg(QStringLiteral(REPACK_VERSION)));
}

} // namespace ui
