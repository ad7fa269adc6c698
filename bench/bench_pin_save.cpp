// repack-bench-pin: what a save writes when the user pins one tensor (issue 36 item 2). The
// desktop app's save keeps every tensor where it is and moves only pinned ones
// (SaveOptions::keepPlacement); a data file whose bytes do not change is not written. Each run
// loads MODEL, pins one tensor of its first data file inline (or, when it is inline after the
// run before, back into that file), saves in place, and prints the bytes the process wrote
// (/proc/self/io wchar), the time, and which files were written anew (a new inode). With
// --rewrite every data file is written, as saves did before.
//   repack-bench-pin MODEL [--runs N] [--rewrite]
#include "core/model/model.h"
#include "core/plan/save_options.h"
#include "core/save/save.h"

#include <CLI/CLI.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace {

uint64_t bytesWritten()
{
    std::ifstream io("/proc/self/io");
    std::string key;
    uint64_t value = 0;
    while (io >> key >> value)
        if (key == "wchar:")
            return value;
    return 0;
}

ino_t inodeOf(const std::filesystem::path& path)
{
    struct stat st { };
    return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

// The data files the model reads, relative names, in order of first use.
std::vector<std::string> dataFiles(const repack::Model& model)
{
    std::vector<std::string> files;
    for (const repack::TensorInfo& tensor : model.tensors())
        if (tensor.isExternal()
            && std::find(files.begin(), files.end(), tensor.external->location()) == files.end())
            files.push_back(tensor.external->location());
    return files;
}

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values.empty() ? 0 : values[values.size() / 2];
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"Bytes a save writes for one pinned tensor", "repack-bench-pin"};
    std::filesystem::path path;
    int runs = 3;
    bool rewrite = false;
    app.add_option("MODEL", path, "A model with external data files (saved in place)")->required();
    app.add_option("--runs", runs, "Saves to make (each pins the tensor out or back in)")
        ->check(CLI::PositiveNumber);
    app.add_flag("--rewrite", rewrite, "Write every data file, as saves did before issue 36");
    CLI11_PARSE(app, argc, argv);

    // The tensor: the smallest external one of the first data file, found once.
    std::string name;
    std::string home;
    {
        auto model = repack::Model::load(path);
        if (!model) {
            std::cerr << "repack-bench-pin: " << model.error().message << '\n';
            return 1;
        }
        const auto files = dataFiles(**model);
        if (files.size() < 2) {
            std::cerr << "repack-bench-pin: " << path << " has " << files.size()
                      << " data file(s); the bench needs two or more\n";
            return 1;
        }
        home = files.front();
        uint64_t smallest = UINT64_MAX;
        for (const repack::TensorInfo& tensor : (*model)->tensors())
            if (tensor.isExternal() && tensor.external->location() == home
                && tensor.byteSize() < smallest) {
                smallest = tensor.byteSize();
                name = tensor.name;
            }
        std::cout << "model " << path << "\npinned tensor " << name << " (" << smallest
                  << " bytes) of " << home << "\nmode " << (rewrite ? "rewrite" : "kept") << '\n';
    }

    // By direction: [0] out of the file (inline), [1] back into it.
    std::vector<double> seconds[2];
    std::vector<double> written[2];
    for (int run = 0; run < runs; ++run) {
        auto model = repack::Model::load(path);
        if (!model) {
            std::cerr << "repack-bench-pin: " << model.error().message << '\n';
            return 1;
        }
        const auto& tensors = (*model)->tensors();
        repack::SaveOptions options;
        options.keepPlacement = true;
        options.rewrite = rewrite;
        options.placements.resize(tensors.size());
        bool found = false;
        int direction = 0;
        for (size_t i = 0; i < tensors.size(); ++i)
            if (tensors[i].name == name) {
                options.placements[i] = tensors[i].isExternal()
                    ? repack::TensorPlacement(repack::Placement::Inline)
                    : repack::TensorPlacement(repack::Placement::External, home);
                direction = tensors[i].isExternal() ? 0 : 1;
                found = true;
            }
        if (!found) {
            std::cerr << "repack-bench-pin: " << name << " is gone from " << path << '\n';
            return 1;
        }
        const std::filesystem::path folder = path.parent_path();
        std::map<std::string, ino_t> before;
        for (const std::string& file : dataFiles(**model))
            before[file] = inodeOf(folder / file);
        before[path.filename().string()] = inodeOf(path);

        const uint64_t wroteBefore = bytesWritten();
        const auto start = std::chrono::steady_clock::now();
        auto report = repack::save(**model, path, options);
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
        const uint64_t wrote = bytesWritten() - wroteBefore;
        model->reset();
        if (!report) {
            std::cerr << "repack-bench-pin: " << report.error().message << '\n';
            return 1;
        }
        std::string anew;
        for (const auto& [file, inode] : before)
            if (inodeOf(folder / file) != inode)
                anew += (anew.empty() ? "" : ", ") + file;
        std::printf("run %d (%s): %.2f s, wrote %.1f MiB; written anew: %s\n", run + 1,
            direction == 0 ? "out, inline" : "back in", took.count(), wrote / 1048576.0,
            anew.c_str());
        seconds[direction].push_back(took.count());
        written[direction].push_back(wrote / 1048576.0);
    }
    for (int direction : {0, 1})
        if (!seconds[direction].empty())
            std::printf("median %s: %.2f s, %.1f MiB written\n",
                direction == 0 ? "out, inline" : "back in", median(seconds[direction]),
                median(written[direction]));
    return 0;
}
