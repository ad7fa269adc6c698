// repack-bench-diff: times diffModels(A, B). Pairs that are one byte range of one
// file in both models are equal without reading, so two model files sharing a data file
// should diff in time independent of the weight bytes; two copies of the data file are
// compared byte by byte.
#include "core/inspect/diff.h"
#include "core/model/model.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <vector>

static double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

int main(int argc, char** argv)
{
    CLI::App app{"Time Model::load of A and B, then diffModels(A, B)", "repack-bench-diff"};
    std::string pathA, pathB;
    int runs = 3;
    app.add_option("A", pathA, "The first .onnx file")->required();
    app.add_option("B", pathB, "The second .onnx file")->required();
    app.add_option("--runs", runs, "Timed runs (median reported)")->check(CLI::PositiveNumber);
    CLI11_PARSE(app, argc, argv);

    using Clock = std::chrono::steady_clock;
    auto msSince = [](Clock::time_point from) {
        return std::chrono::duration<double, std::milli>(Clock::now() - from).count();
    };
    std::vector<double> load, diff;
    std::map<std::string_view, size_t> counts;
    uint64_t bytesRead = 0;
    size_t tensors = 0;
    for (int i = 0; i < runs; ++i) {
        const auto start = Clock::now();
        auto a = repack::Model::load(pathA);
        auto b = repack::Model::load(pathB);
        if (!a || !b) {
            std::cerr << "repack-bench-diff: " << (!a ? a.error() : b.error()).message << '\n';
            return 1;
        }
        load.push_back(msSince(start));
        // Fresh models each run: mappings are not shared between runs (the page cache is).
        repack::DiffOptions options;
        options.progress = [&bytesRead](const repack::Progress& p) { bytesRead = p.bytesDone; };
        bytesRead = 0;
        const auto phase = Clock::now();
        auto entries = repack::diffModels(**a, **b, options);
        diff.push_back(msSince(phase));
        if (!entries) {
            std::cerr << "repack-bench-diff: " << entries.error().message << '\n';
            return 1;
        }
        counts.clear();
        for (const auto& e : *entries)
            ++counts[repack::changeKey(e.kind)];
        tensors = (*a)->tensors().size();
    }
    // One "key value" per line, for scripts.
    std::cout << "tensors " << tensors << "\nbytes_compared " << bytesRead << "\nload_ms "
              << median(load) << "\ndiff_ms " << median(diff) << '\n';
    for (const auto& [key, count] : counts)
        std::cout << key << ' ' << count << '\n';
    return 0;
}
