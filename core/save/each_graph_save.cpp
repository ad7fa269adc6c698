#include "each_graph_save.h"

#include "core/inspect/folder_inspect.h"
#include "core/model/model.h"
#include "core/paths.h"
#include "core/plan/save_plan.h"
#include "output_folder.h"
#include "save.h"
#include "save_conflicts.h"

#include <algorithm>
#include <chrono>
#include <map>

namespace fs = std::filesystem;

namespace repack {

// No shared data file: each graph saved on its own (its own data file, the layout options
// applied to each), one after another; the first failure stops, naming the graph, and the
// graphs saved before it stand (each save is complete on its own).
Result<FolderSaveReport> saveEachGraph(
    FolderAccess& folder, const fs::path& outDir, const FolderSaveOptions& options)
{
    const auto started = std::chrono::steady_clock::now();
    const fs::path out = normalFolder(outDir);
    const bool inPlace = !folder.localPath().empty() && normalFolder(folder.localPath()) == out;
    auto picked = chosenModels(folder, options.models);
    if (!picked)
        return picked.error();
    const std::vector<std::string>& chosen = *picked;
    if (options.dryRun)
        return Error::usage("a folder is planned with a shared data file (--shared-data)");
    // Every graph loaded and planned before anything is written: two graphs that would write
    // one data file, or a file replaced that another model reads, are refused with nothing saved.
    struct Each {
        std::string name;
        std::unique_ptr<Model> model;
        SaveOptions options;
    };
    std::vector<Each> graphs;
    std::map<fs::path, std::string> writer; // data file -> the graph that would write it
    std::string consent; // the files replaced that need consent, of every graph
    for (const std::string& name : chosen) {
        auto model = folder.open(name);
        if (!model)
            return model.error();
        SaveOptions graphOptions(options.layout, options.controls);
        if (options.perGraphRequest) {
            auto applied = applySaveRequest(*options.perGraphRequest, out / name);
            if (!applied)
                return applied.error();
            graphOptions = std::move(applied->options);
            graphOptions.progress = options.controls.progress;
            graphOptions.cancel = options.controls.cancel;
        }
        auto plan = planSave(**model, out / name, graphOptions);
        if (!plan)
            return plan.error().prefixed(name + ": ");
        for (const std::string& file : plan->files) {
            const fs::path path = (out / file).lexically_normal();
            auto [it, fresh] = writer.emplace(path, name);
            if (!fresh)
                return Error::usage(it->second + " and " + name + " would both write "
                    + path.string()
                    + "; --shared-data makes one data file they share, or give each its own "
                      "layout");
        }
        if (!graphOptions.force) {
            auto conflicts = saveConflicts(**model, out / name, graphOptions);
            if (!conflicts)
                return conflicts.error().prefixed(name + ": ");
            for (const SaveConflict& c : *conflicts)
                consent += (consent.empty() ? "" : "; ") + name + ": " + c.message;
        }
        graphs.push_back({name, std::move(*model), std::move(graphOptions)});
    }
    if (!consent.empty()) // every graph's, not the first
        return Error{consent, ErrorKind::ConsentNeeded};
    auto created = createOutputFolders(out / chosen.front());
    if (!created)
        return created.error();
    FolderSaveReport report;
    report.folder = out;
    const auto joinNames = [](auto from, auto to) {
        std::string out;
        for (auto it = from; it != to; ++it)
            out += (out.empty() ? "" : ", ") + it->name;
        return out;
    };
    for (auto g = graphs.begin(); g != graphs.end(); ++g) {
        auto saved = save(*g->model, out / g->name, g->options);
        if (!saved) {
            if (report.models.empty()) {
                removeCreatedFolders(*created);
                return saved.error();
            }
            // Each graph stands on its own: those saved before are complete, this one and the
            // rest are as they were. Say which is which.
            const std::string rest = joinNames(g + 1, graphs.end());
            return saved.error().prefixed(g->name + " was not saved"
                + (rest.empty() ? "" : ", nor " + rest)
                + "; saved before it: " + joinNames(graphs.begin(), g)
                + " (each complete with its new layout; repacking the folder again"
                + (inPlace ? "" : " with --force, which replaces what they wrote,")
                + " finishes it): ");
        }
        report.models.push_back(g->name);
        report.unchanged = (report.models.size() == 1 || report.unchanged) && saved->unchanged;
        report.externalTensors += saved->externalTensors;
        report.bytesAfter += saved->bytesWritten;
        for (auto& w : saved->warnings)
            report.warnings.push_back(g->name + ": " + w);
        for (auto& removed : saved->removed)
            report.removed.push_back(removed);
    }
    report.seconds
        = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return report;
}

} // namespace repack
