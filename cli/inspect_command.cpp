#include "cli.h"
#include "command_token.h"
#include "commands.h"
#include "core/remote/model_source.h"
#include "terminal_text.h"
#include "text_table.h"

#include "core/dtype.h"
#include "core/format.h"
#include "core/inspect/audit.h"
#include "core/inspect/folder_inspect.h"
#include "core/inspect/folder_scan.h"
#include "core/inspect/report.h"
#include "core/model/model.h"
#include "core/plan/file_layout.h"
#include "core/plan/save_request.h"
#include "core/plan/targets.h"

#include <CLI/CLI.hpp>

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <iostream>
#include <memory>

namespace repack::cli {
namespace {

constexpr uint64_t kProtobufLimit = 2ull << 30;

std::string percent(uint64_t part, uint64_t whole)
{
    char text[16];
    std::snprintf(text, sizeof text, "%.1f%%", whole ? 100.0 * part / whole : 0.0);
    return text;
}

void printText(
    const Model& model, const std::vector<Problem>& problems, uint64_t alignment, std::ostream& out)
{
    const ModelHeader& header = model.header();
    out << "Model " << printable(model.origin()) << "  (IR " << header.irVersion;
    if (!header.producerName.empty())
        out << ", " << printable(header.producerName + ' ' + header.producerVersion);
    out << ")\n\n";

    uint64_t inlineBytes = 0, externalBytes = 0;
    size_t inlineCount = 0, externalCount = 0;
    for (const auto& t : model.tensors()) {
        (t.isExternal() ? externalCount : inlineCount)++;
        (t.isExternal() ? externalBytes : inlineBytes) += t.byteSize();
    }
    const auto& tensors = model.tensors();
    TextTable table(
        {"NAME", "SCOPE", "KIND", "DTYPE", "SHAPE", "SIZE", "STORAGE", "OFFSET", "LENGTH"},
        tensors.size(), [&tensors](size_t i) {
            const TensorInfo& t = tensors[i];
            const auto type = dtype::name(t.dataType);
            std::vector<std::string> row{t.name, t.scope, std::string(kindName(t.kind)),
                type ? std::string(*type) : "?", formatShape(t.shape),
                t.bytes ? formatBytes(*t.bytes) : "?", "inline", "", ""};
            if (t.isExternal()) {
                row[6] = t.external->location();
                row[7] = std::to_string(t.external->offset);
                row[8] = std::to_string(t.external->length.value_or(t.byteSize()));
            }
            return row;
        });
    table.print(out, {5, 7, 8});

    out << "\n"
        << model.tensors().size() << " tensors: " << inlineCount << " inline ("
        << formatBytes(inlineBytes) << "), " << externalCount << " external ("
        << formatBytes(externalBytes) << ")\n";
    out << "protobuf " << formatBytes(model.fileBytes()) << " of the 2 GiB limit ("
        << percent(model.fileBytes(), kProtobufLimit) << ")\n";
    for (const auto& f : computeLayout(model, alignment, LayoutDetail::Totals)) {
        out << "data file " << printable(f.location) << (f.headerBytes ? " (safetensors)" : "")
            << ": " << formatBytes(f.bytes);
        if (f.headerBytes)
            out << ", header " << formatBytes(f.headerBytes);
        out << ", referenced " << formatBytes(f.referencedBytes) << ", padding "
            << formatBytes(f.paddingBytes) << ", orphaned " << formatBytes(f.orphanedBytes);
        if (f.overlappingBytes)
            out << ", overlapping " << formatBytes(f.overlappingBytes);
        if (f.sharedBytes)
            out << ", shared by identical tensors " << formatBytes(f.sharedBytes);
        out << '\n';
    }
    if (!problems.empty()) {
        out << "\n" << problems.size() << " problem(s):\n";
        for (const auto& p : problems)
            out << severityName(p.severity) << ": " << p.code << ": " << printable(p.message)
                << '\n';
    }
}

std::string loaderList(const FolderModel& m)
{
    if (!m.model)
        return "-";
    std::string out;
    for (auto [ok, name] : {std::pair{m.loaders.onnx, "onnx"},
             std::pair{m.loaders.onnxRuntime, "ort"}, std::pair{m.loaders.onnxIr, "onnx_ir"}})
        out += (out.empty() ? "" : " ") + std::string(ok ? "" : "!") + name;
    return out;
}

std::string joined(const std::vector<std::string>& items, const char* separator)
{
    std::string out;
    for (const auto& item : items)
        out += (out.empty() ? "" : separator) + item;
    return out;
}

void printFolderText(const FolderInspection& folder, std::ostream& out)
{
    out << "Folder " << printable(folder.folder.string()) << ": " << folder.models.size()
        << " model(s), " << folder.files.size() << " data file(s)\n\n";
    TextTable models({"MODEL", "TENSORS", "INLINE", "EXTERNAL", "DATA FILES", "LOADERS"});
    for (const FolderModel& m : folder.models)
        models.addRow({m.name, m.model ? std::to_string(m.tensors) : "?",
            m.model ? formatBytes(m.inlineBytes) : "?",
            m.model ? formatBytes(m.externalBytes) : "?",
            m.files.empty() ? "-" : joined(m.files, ", "), loaderList(m)});
    models.print(out, {1, 2, 3});
    if (!folder.files.empty()) {
        out << '\n';
        TextTable files({"DATA FILE", "SIZE", "READ BY"});
        for (const FolderFile& f : folder.files)
            files.addRow({f.location, formatBytes(f.bytes),
                f.usedBy.empty() ? "(no model)" : joined(f.usedBy, ", ")});
        files.print(out, {1});
    }
    if (!folder.shared.empty()) {
        out << "\nContent held by more than one tensor (" << folder.shared.size()
            << " group(s)), stored more than once: " << formatBytes(folder.duplicatedBytes) << '\n';
        constexpr size_t kShown = 20;
        for (size_t i = 0; i < folder.shared.size() && i < kShown; ++i) {
            const SharedContent& c = folder.shared[i];
            std::vector<std::string> names;
            for (const SharedTensor& t : c.tensors)
                names.push_back(t.model + ":" + t.scope + "/" + t.name);
            out << "  " << formatBytes(c.bytes) << " x" << c.tensors.size() << " in " << c.copies
                << (c.copies == 1 ? " copy: " : " copies: ") << printable(joined(names, ", "))
                << '\n';
        }
        if (folder.shared.size() > kShown)
            out << "  ... and " << folder.shared.size() - kShown
                << " more (--json lists them all)\n";
    }
    if (!folder.problems.empty()) {
        out << "\n" << folder.problems.size() << " problem(s):\n";
        for (const FolderProblem& p : folder.problems)
            out << severityName(p.severity) << ": " << p.code << ": "
                << printable(
                       (p.model.empty() || p.message.starts_with(p.model) ? "" : p.model + ": ")
                       + p.message)
                << '\n';
    }
}

// The folder report (a local folder's, or a Hub folder's: the same report of the same files).
int inspectFolderCommand(
    Result<FolderInspection> folder, bool json, std::ostream& out, std::ostream& err)
{
    if (!folder)
        return reportFailure(folder.error(), err);
    if (commandStopped()) // a model it could not open for the stop is no finding
        return reportFailure(cancelled("inspect"), err);
    if (json)
        writeFolderJson(out, *folder);
    else
        printFolderText(*folder, out);
    const bool failed = std::any_of(folder->problems.begin(), folder->problems.end(),
        [](const FolderProblem& p) { return p.severity == Severity::Error; });
    return failed ? Failed : Ok;
}

} // namespace

int inspect(const char* modelPath, bool json, std::ostream& out, std::ostream& err, bool deep,
    const std::string& target, const std::string& align)
{
    AuditOptions audit{.compareBytes = deep, .cancel = commandToken()};
    if (!align.empty()) {
        auto written = parseAlignment(align, "--align");
        if (!written)
            return reportFailure(written.error(), err);
        audit.writtenAlignment = *written;
    }
    if (!target.empty()) {
        const Target* found = findTarget(target);
        if (!found) {
            err << "onnx-repack: unknown target '" << printable(target) << "' (one of "
                << targetNames() << ")\n";
            return Usage;
        }
        audit.alignment = found->alignment;
    }
    std::error_code ec;
    const bool hubFolder = namesHubFolder(modelPath);
    if (hubFolder
        || (!namesRemoteModel(modelPath) && std::filesystem::is_directory(modelPath, ec))) {
        if (!target.empty() || !align.empty()) {
            const std::string option = !target.empty() ? "--target" : "--align";
            err << "onnx-repack: " << option << " audits one model; inspect "
                << printable(modelPath) << "/MODEL.onnx " << option << ' '
                << printable(!target.empty() ? target : align) << '\n';
            return Usage;
        }
        // Always compares (--deep); a Hub folder is listed once, its models read at one commit.
        commandStep("inspecting the folder " + shownArgument(modelPath));
        const FolderInspectOptions options{.cancel = commandToken()};
        return inspectFolderCommand(
            hubFolder ? inspectRemoteFolder(modelPath, options) : inspectFolder(modelPath, options),
            json, out, err);
    }
    commandStep("opening " + shownArgument(modelPath));
    auto model = openModelArgument(modelPath, commandToken());
    if (!model)
        return reportFailure(model.error(), err);
    // The folder's housekeeping (leftovers, unused or hard-linked data) and the storage audit
    // (alignment, limits, unused and duplicate tensors) are only ever warnings.
    std::vector<Problem> folderProblems = housekeepingProblems(**model);
    // Only --deep reads weights (to find identical copies): inspecting never touches them.
    commandStep("auditing " + shownArgument(modelPath));
    for (auto& p : auditModel(**model, audit))
        folderProblems.push_back(std::move(p));
    if (commandStopped()) // an audit stopped says less than it found
        return reportFailure(cancelled("inspect"), err);
    if (json) {
        writeInspectJson(out, **model, folderProblems, gapAlignment(audit));
    } else {
        std::vector<Problem> problems = (*model)->problems();
        problems.insert(problems.end(), folderProblems.begin(), folderProblems.end());
        printText(**model, problems, gapAlignment(audit), out);
    }
    return (*model)->hasErrors() ? Failed : Ok; // warnings never fail; the listing is complete
}

Command addInspect(CLI::App& app)
{
    auto* sub = app.add_subcommand("inspect", "List every tensor and where its bytes live");
    auto path = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    sub->add_option("MODEL", *path,
           "The .onnx file (" + std::string(kModelForms)
               + "), or a folder of them (local, or hf://ORG/REPO[@REV]/DIR): every graph, its "
                 "data files, the weights stored more than once and the loaders that accept each "
                 "graph")
        ->required();
    auto deep = std::make_shared<bool>(false);
    sub->add_flag("--json", *json,
        "Print one JSON object (schema onnx-repack/inspect/1; onnx-repack/folder/1 for a folder)");
    sub->add_flag("--deep", *deep,
        "Also read the weights to find tensors stored more than once (duplicate-bytes)");
    auto target = std::make_shared<std::string>();
    sub->add_option("--target", *target,
           "Audit for a target's readers too (ort: the 64 KiB alignment ONNX Runtime before 1.23 "
           "needs on Windows): "
               + targetNames())
        ->type_name("NAME");
    auto align = std::make_shared<std::string>();
    sub->add_option("--align", *align,
           "The alignment the data files were written with, when you know it (a size: 0 or a "
           "power of two up to 16 MiB): of a gap, only what it asks for is padding, the rest "
           "orphaned (default: the target's alignment, else 4096)")
        ->type_name("SIZE");
    return {sub, [path, json, deep, target, align] {
                return inspect(path->c_str(), *json, std::cout, std::cerr, *deep, *target, *align);
            }};
}

} // namespace repack::cli
