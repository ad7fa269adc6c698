// repack::planSave for the GUI, which never runs it on its own thread: a SavePlanning request
// holds all a worker needs (the model, shared, so a newer model can replace it meanwhile; the
// path; the options), taken on the GUI thread, and plan() runs on a worker. Every plan the
// window makes goes through here (the repack preview, the placement pins' check, Export Plan),
// so a test can see which thread each ran on.
#pragma once

#include "core/plan/save_options.h"
#include "core/plan/save_plan.h"
#include "core/result.h"

#include <QThread>

#include <filesystem>
#include <functional>
#include <memory>

namespace repack {
class Model;
}

namespace ui {

struct SavePlanning {
    std::shared_ptr<const repack::Model> model;
    std::filesystem::path path; // where the save would write the model
    repack::SaveOptions options;

    // repack::planSave(*model, path, options); for a worker thread.
    repack::Result<repack::SavePlan> plan() const;
};

// For tests: `observer` is called with the thread of every plan() from now on (empty: none).
void setPlanningObserver(std::function<void(QThread*)> observer);

} // namespace ui
