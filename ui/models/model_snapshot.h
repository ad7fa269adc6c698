// A Qt-side copy of everything the views show about a model: one row per tensor, the problems,
// the data file layouts and the totals. The views never hold pointers into repack::Model,
// because a save rewrites the model's tensor index (and invalidates its handles) underneath
// them; after a save the window builds a new snapshot instead.
#pragma once

#include "core/plan/file_layout.h"
#include "core/plan/save_options.h"
#include "core/progress.h"

#include <QList>
#include <QString>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace repack {
class Model;
}

namespace ui {

struct TensorRow {
    QString name;
    QString scope;
    QString kind;
    QString dtype;
    QString shape;
    uint64_t bytes = 0;
    bool external = false;
    bool typed = false; // inline in typed fields (float_data, int64_data, ...), not raw_data
    QString storage; // "inline", "inline (typed)" or the data file location
    uint64_t offset = 0;
    uint64_t length = 0;
    int problemCount = 0;
    bool hasError = false;
    QString status; // "ok", or the first problem's code
    QString statusMessage; // that problem's message
};

struct ProblemRow {
    bool error = true;
    QString tensor; // "scope/name", empty for model-wide problems
    int tensorIndex = -1; // row in ModelSnapshot::tensors, -1 when none
    QString code;
    QString message;
};

struct FileTotal {
    QString location;
    uint64_t bytes = 0;
};

struct ModelSnapshot {
    QString path; // absolute, or the URL a remote model was opened from, as given
    bool remote = false; // opened from a URL (repack::Model::isRemote): read-only
    // A remote model's version as its source names it ("etag X", a date and weak ETag, a Hub
    // file's linked ETag): the one the window shows; empty for a local model.
    QString remoteVersion;
    uint64_t protobufBytes = 0;
    uint64_t inlineBytes = 0;
    uint64_t externalBytes = 0;
    uint64_t orphanedBytes = 0;
    uint64_t largestTensor = 0;
    QList<TensorRow> tensors;
    QList<ProblemRow> problems;
    std::vector<repack::FileLayout> layouts; // Region::tensor indexes `tensors`
    // The locations of the data files whose bytes are the model's alone (repack::readOnlyBy,
    // found by addFolderProblems): where a byte no tensor reads is orphaned, and said so.
    QStringList ownDataFiles;
};

// Copies what the views need out of `model`; computes the file layout once.
ModelSnapshot takeSnapshot(const repack::Model& model);

// Appends the warnings about the model's folder (leftover temporaries of dead saves, data files
// no model there uses, hard-linked data files). Reads the folder and may parse the other models
// in it: call it on a worker thread only.
void addFolderProblems(ModelSnapshot& snapshot, const repack::Model& model);

// Counts the gaps of the snapshot's data files again against `alignment` (the one the next save
// would use; core/plan/file_layout.h), and what follows from them: the orphaned bytes and the
// Problems pane's orphaned-bytes warnings. Needs no model. True when a count changed.
bool countGapsAgainst(ModelSnapshot& snapshot, uint64_t alignment);

// What the model's data files are: Safetensors when every one that exists is a .safetensors
// file, Raw when any is not, nullopt without external data (or with none of its files there).
std::optional<repack::DataFormat> dataFormatOf(const ModelSnapshot& snapshot);

// True when `a` and `b` list the same tensors in the same order (name, scope, kind, type,
// shape, size), wherever each is stored: what a save leaves unchanged.
bool sameTensors(const QList<TensorRow>& a, const QList<TensorRow>& b);

// A model opened off the GUI thread, with its snapshot.
struct LoadedModel {
    QString path; // as asked for
    std::shared_ptr<repack::Model> model; // null when it cannot be opened
    ModelSnapshot snapshot; // snapshot.path is absolute (a URL as asked for)
    QString error; // why not, when `model` is null
};

// The model `path` names (a path or a URL: repack::openModelArgument), its snapshot and
// addFolderProblems; no GUI, for a worker thread. `cancel` and `progress` reach a URL's fetch.
LoadedModel loadModel(const QString& path, const repack::CancelToken* cancel = nullptr,
    const repack::ProgressCallback& progress = {});

} // namespace ui
