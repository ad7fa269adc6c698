// Opens models off the GUI thread: Model::load and the snapshot run on a worker while the
// window keeps painting and answering, and shows its current model until the new one is in.
// A newer open replaces one still loading, whose result then never arrives.
#pragma once

#include "ui/models/model_snapshot.h"
#include "ui/util/job_tracker.h"

#include <QObject>

namespace ui {

class ModelOpener : public QObject {
    Q_OBJECT
public:
    explicit ModelOpener(QObject* parent = nullptr);

    // Starts loading `path`; `quiet` travels with it to failed().
    void open(const QString& path, bool quiet);
    bool isLoading() const { return !m_path.isEmpty(); }

Q_SIGNALS:
    // Emitted once the load is over (isLoading() is false by then).
    void opened(const ui::LoadedModel& loaded);
    void failed(const QString& path, const QString& error, bool quiet);

private:
    void onFinished(const LoadedModel& loaded);

    JobTracker m_jobs;
    QString m_path; // the model being loaded, empty when none
    bool m_quiet = false;
};

} // namespace ui
