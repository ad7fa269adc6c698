#include "model_snapshot.h"

#include "core/dtype.h"
#include "core/format.h"
#include "core/model.h"

#include <QHash>

#include <algorithm>

namespace ui {
namespace {

QString qs(std::string_view text)
{
    return QString::fromUtf8(text.data(), qsizetype(text.size()));
}

QString storageText(const repack::TensorInfo& t)
{
    switch (t.storage) {
    case repack::Storage::Raw:
        return QStringLiteral("inline");
    case repack::Storage::Typed:
        return QStringLiteral("inline (typed)");
    case repack::Storage::External:
        break;
    }
    return qs(t.external.location);
}

TensorRow rowFor(const repack::TensorInfo& t)
{
    TensorRow row;
    row.name = qs(t.name);
    row.scope = qs(t.scope);
    row.kind = qs(repack::kindName(t.kind));
    const auto dtype = repack::dtype::name(t.dataType);
    row.dtype = dtype ? qs(*dtype) : QStringLiteral("type %1").arg(t.dataType);
    row.shape = qs(repack::formatShape(t.shape));
    row.bytes = t.byteSize();
    row.external = t.isExternal();
    row.storage = storageText(t);
    if (row.external) {
        row.offset = t.external.offset;
        row.length = t.external.length.value_or(t.byteSize());
    }
    row.hasError = t.hasError;
    return row;
}

} // namespace

ModelSnapshot takeSnapshot(const repack::Model& model)
{
    ModelSnapshot snap;
    snap.path = QString::fromStdString(model.path().string());
    snap.protobufBytes = model.fileBytes();

    const auto& tensors = model.tensors();
    snap.tensors.reserve(qsizetype(tensors.size()));
    QHash<QString, int> byQualifiedName;
    byQualifiedName.reserve(qsizetype(tensors.size()));
    for (const repack::TensorInfo& t : tensors) {
        byQualifiedName.insert(qs(t.qualifiedName()), int(snap.tensors.size()));
        snap.tensors.append(rowFor(t));
        const TensorRow& row = snap.tensors.constLast();
        (row.external ? snap.externalBytes : snap.inlineBytes) += row.bytes;
        snap.largestTensor = std::max(snap.largestTensor, row.bytes);
    }

    std::vector<bool> statusIsError(tensors.size(), false);
    for (const repack::Problem& p : model.problems()) {
        ProblemRow row;
        row.error = p.severity == repack::Severity::Error;
        row.tensor = qs(p.tensor);
        row.tensorIndex = byQualifiedName.value(row.tensor, -1);
        row.code = qs(p.code);
        row.message = qs(p.message);
        if (row.tensorIndex >= 0) {
            // The status column names the first error, or the first warning when there is none.
            TensorRow& tensor = snap.tensors[row.tensorIndex];
            if (tensor.status.isEmpty() || (row.error && !statusIsError[row.tensorIndex])) {
                tensor.status = row.code;
                statusIsError[row.tensorIndex] = row.error;
            }
            ++tensor.problemCount;
        }
        snap.problems.append(row);
    }
    for (TensorRow& row : snap.tensors) {
        if (row.status.isEmpty())
            row.status = QStringLiteral("ok");
    }

    snap.layouts = repack::computeLayout(model);
    for (const repack::FileLayout& file : snap.layouts)
        snap.orphanedBytes += file.orphanedBytes;
    return snap;
}

} // namespace ui
