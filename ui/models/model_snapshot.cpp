#include "model_snapshot.h"

#include "core/dtype.h"
#include "core/format.h"
#include "core/inspect/audit.h"
#include "core/inspect/folder_scan.h"
#include "core/model/data_file.h"
#include "core/model/model.h"
#include "core/plan/file_layout.h"
#include "core/plan/save_options.h"
#include "core/problem.h"
#include "core/remote/model_source.h"

#include <QFileInfo>
#include <QHash>

#include <algorithm>

namespace ui {
namespace {

QString qs(std::string_view text)
{
    return QString::fromUtf8(text.data(), qsizetype(text.size()));
}

// Neighbouring rows mostly share their scope, kind, type and data file: converting each text
// once and sharing the QString (implicitly) saves 100,000s of allocations on big models.
class Reused {
public:
    const QString& operator()(std::string_view text)
    {
        if (m_text.isNull() || text != m_source) {
            m_source = text;
            m_text = qs(text);
        }
        return m_text;
    }

private:
    std::string m_source;
    QString m_text;
};

struct RowTexts {
    Reused scope, kind, dtype, location;
};

QString storageText(const repack::TensorInfo& t, Reused& location)
{
    switch (t.storage) {
    case repack::Storage::Raw:
        return QStringLiteral("inline");
    case repack::Storage::Typed:
        return QStringLiteral("inline (typed)");
    case repack::Storage::External:
        break;
    }
    return location(t.external->location());
}

TensorRow rowFor(const repack::TensorInfo& t, RowTexts& texts)
{
    TensorRow row;
    row.name = qs(t.name);
    row.scope = texts.scope(t.scope);
    row.kind = texts.kind(repack::kindName(t.kind));
    const auto dtype = repack::dtype::name(t.dataType);
    row.dtype = dtype ? texts.dtype(*dtype) : QStringLiteral("type %1").arg(t.dataType);
    row.shape = qs(repack::formatShape(t.shape));
    row.bytes = t.byteSize();
    row.external = t.isExternal();
    row.typed = t.storage == repack::Storage::Typed;
    row.storage = storageText(t, texts.location);
    if (row.external) {
        row.offset = t.external->offset;
        row.length = t.external->length.value_or(t.byteSize());
    }
    row.hasError = t.hasError;
    return row;
}

// Appends `problems` to the snapshot's rows, and counts each against its tensor (the status
// column names the tensor's first error, or its first warning when there is none).
void addProblems(
    ModelSnapshot& snap, const repack::Model& model, const std::vector<repack::Problem>& problems)
{
    if (problems.empty())
        return;
    // Problems name their tensor as "scope/name".
    const auto& tensors = model.tensors();
    QHash<QString, int> byQualifiedName;
    byQualifiedName.reserve(qsizetype(tensors.size()));
    for (size_t i = 0; i < tensors.size(); ++i)
        byQualifiedName.insert(qs(tensors[i].qualifiedName()), int(i));

    // A status already set by an earlier call names an error when its tensor has one.
    const QString ok = QStringLiteral("ok");
    std::vector<bool> statusIsError(size_t(snap.tensors.size()));
    for (qsizetype i = 0; i < snap.tensors.size(); ++i) {
        const TensorRow& row = snap.tensors[i];
        statusIsError[size_t(i)] = row.hasError && !row.status.isEmpty() && row.status != ok;
    }
    for (const repack::Problem& p : problems) {
        ProblemRow row;
        row.error = p.severity == repack::Severity::Error;
        row.tensor = qs(p.tensor);
        row.tensorIndex = row.tensor.isEmpty() ? -1 : byQualifiedName.value(row.tensor, -1);
        row.code = qs(p.code);
        row.message = qs(p.message);
        if (row.tensorIndex >= 0 && row.tensorIndex < snap.tensors.size()) {
            TensorRow& tensor = snap.tensors[row.tensorIndex];
            const size_t i = size_t(row.tensorIndex);
            if (tensor.status.isEmpty() || tensor.status == ok
                || (row.error && !statusIsError[i])) {
                tensor.status = row.code;
                tensor.statusMessage = row.message;
                statusIsError[i] = row.error;
            }
            ++tensor.problemCount;
        }
        snap.problems.append(row);
    }
}

} // namespace

ModelSnapshot takeSnapshot(const repack::Model& model)
{
    ModelSnapshot snap;
    snap.path = QString::fromStdString(model.path().string());
    snap.remote = model.isRemote();
    if (snap.remote && model.inFileSource())
        if (const auto* version
            = std::get_if<std::string>(&model.inFileSource()->source().identity().version))
            snap.remoteVersion = QString::fromStdString(*version);
    snap.protobufBytes = model.fileBytes();

    const auto& tensors = model.tensors();
    snap.tensors.reserve(qsizetype(tensors.size()));
    RowTexts texts;
    for (const repack::TensorInfo& t : tensors) {
        snap.tensors.append(rowFor(t, texts));
        const TensorRow& row = snap.tensors.constLast();
        (row.external ? snap.externalBytes : snap.inlineBytes) += row.bytes;
        snap.largestTensor = std::max(snap.largestTensor, row.bytes);
    }

    addProblems(snap, model, model.problems());
    for (TensorRow& row : snap.tensors) {
        if (row.status.isEmpty())
            row.status = QStringLiteral("ok");
    }

    snap.layouts = repack::computeLayout(model, repack::kDefaultAlignment);
    for (const repack::FileLayout& file : snap.layouts)
        snap.orphanedBytes += file.orphanedBytes;
    return snap;
}

std::optional<repack::DataFormat> dataFormatOf(const ModelSnapshot& snapshot)
{
    std::optional<repack::DataFormat> format;
    for (const repack::FileLayout& file : snapshot.layouts) {
        if (file.bytes == 0)
            continue; // missing or empty: says nothing about the format
        if (file.headerBytes == 0)
            return repack::DataFormat::Raw;
        format = repack::DataFormat::Safetensors;
    }
    return format;
}

namespace {

// The snapshot's orphaned-bytes warnings, as its layouts count them now: each file whose bytes
// are the model's alone (ownDataFiles) and hold orphaned bytes, where the warnings stood before
// (at the end the first time).
void sayOrphanedBytes(ModelSnapshot& snapshot)
{
    const QString orphaned = qs(repack::code::OrphanedBytes);
    const auto first = std::find_if(snapshot.problems.cbegin(), snapshot.problems.cend(),
        [&](const ProblemRow& row) { return row.code == orphaned; });
    qsizetype at = first - snapshot.problems.cbegin();
    snapshot.problems.removeIf([&](const ProblemRow& row) { return row.code == orphaned; });
    const std::string modelName = QFileInfo(snapshot.path).fileName().toStdString();
    for (const repack::FileLayout& layout : snapshot.layouts) {
        if (!layout.orphanedBytes || !snapshot.ownDataFiles.contains(qs(layout.location)))
            continue;
        const repack::Problem warning = repack::orphanedBytesWarning(modelName, layout);
        ProblemRow row;
        row.error = false;
        row.code = qs(warning.code);
        row.message = qs(warning.message);
        snapshot.problems.insert(at++, row);
    }
}

} // namespace

void addFolderProblems(ModelSnapshot& snapshot, const repack::Model& model)
{
    addProblems(snapshot, model, repack::housekeepingProblems(model));
    // The storage audit, without the byte comparison: opening never reads weights. Its
    // orphaned-bytes warnings are the snapshot's, said again whenever its gaps are counted.
    addProblems(snapshot, model,
        repack::auditModel(model, {.orphanedBytes = false, .compareBytes = false}));
    // Whose unread bytes are orphaned is asked once, of the files with a gap (a file without
    // one has no orphaned bytes at any alignment).
    std::vector<repack::FileLayout> gapped;
    std::copy_if(snapshot.layouts.begin(), snapshot.layouts.end(), std::back_inserter(gapped),
        [](const repack::FileLayout& f) { return f.paddingBytes + f.orphanedBytes > 0; });
    const std::vector<bool> own = repack::readOnlyBy(model, gapped);
    for (size_t i = 0; i < own.size(); ++i)
        if (own[i])
            snapshot.ownDataFiles << qs(gapped[i].location);
    sayOrphanedBytes(snapshot);
}

bool countGapsAgainst(ModelSnapshot& snapshot, uint64_t alignment)
{
    bool changed = false;
    for (repack::FileLayout& layout : snapshot.layouts)
        if (layout.alignment != alignment) {
            layout = repack::recountedLayout(layout, alignment);
            changed = true;
        }
    if (!changed)
        return false;
    snapshot.orphanedBytes = 0;
    for (const repack::FileLayout& layout : snapshot.layouts)
        snapshot.orphanedBytes += layout.orphanedBytes;
    sayOrphanedBytes(snapshot);
    return true;
}

bool sameTensors(const QList<TensorRow>& a, const QList<TensorRow>& b)
{
    return std::equal(
        a.cbegin(), a.cend(), b.cbegin(), b.cend(), [](const TensorRow& x, const TensorRow& y) {
            return x.bytes == y.bytes && x.name == y.name && x.scope == y.scope && x.kind == y.kind
                && x.dtype == y.dtype && x.shape == y.shape;
        });
}

LoadedModel loadModel(const QString& path, const repack::CancelToken* cancel,
    const repack::ProgressCallback& progress)
{
    LoadedModel loaded;
    loaded.path = path;
    auto model = repack::openModelArgument(path.toStdString(), cancel, progress);
    if (!model) {
        loaded.error = QString::fromStdString(model.error().message);
        return loaded;
    }
    loaded.model = std::move(model.value());
    loaded.snapshot = takeSnapshot(*loaded.model);
    addFolderProblems(loaded.snapshot, *loaded.model);
    loaded.snapshot.path = loaded.model->isRemote() ? path : QFileInfo(path).absoluteFilePath();
    return loaded;
}

} // namespace ui
