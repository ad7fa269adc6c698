// repack-bench-open: times what opening a model in the tool costs (parse, index, validate,
// layout, the inspect report) and reports this process's peak RSS. Weight bytes are never
// read, so the time should not depend on the weight size.
#include "core/inspect/report.h"
#include "core/model/model.h"
#include "core/plan/file_layout.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <sys/resource.h>
#include <vector>

static double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

int main(int argc, char** argv)
{
    CLI::App app{"Time Model::load + computeLayout + inspectJson", "repack-bench-open"};
    std::string path;
    int runs = 5;
    app.add_option("MODEL", path, "The .onnx file")->required();
    app.add_option("--runs", runs, "Timed runs (median reported)")->check(CLI::PositiveNumber);
    CLI11_PARSE(app, argc, argv);

    // Per phase and in total, so a slow open points at its cause.
    std::vector<double> load, layout, json, total;
    size_t tensors = 0, files = 0, jsonBytes = 0;
    using Clock = std::chrono::steady_clock;
    auto msSince = [](Clock::time_point from) {
        return std::chrono::duration<double, std::milli>(Clock::now() - from).count();
    };
    for (int i = 0; i < runs; ++i) {
        const auto start = Clock::now();
        auto model = repack::Model::load(path);
        if (!model) {
            std::cerr << "repack-bench-open: " << model.error().message << '\n';
            return 1;
        }
        load.push_back(msSince(start));
        auto phase = Clock::now();
        files = repack::computeLayout(**model, repack::kDefaultAlignment).size();
        layout.push_back(msSince(phase));
        phase = Clock::now();
        jsonBytes = repack::inspectJson(**model).dump().size();
        json.push_back(msSince(phase));
        tensors = (*model)->tensors().size();
        total.push_back(msSince(start));
    }
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    // One "key value" per line, for scripts.
    std::cout << "tensors " << tensors << "\nfiles " << files << "\njson_bytes " << jsonBytes
              << "\nload_ms " << median(load) << "\nlayout_ms " << median(layout) << "\njson_ms "
              << median(json) << "\nmedian_ms " << median(total) << "\npeak_rss_kib "
              << usage.ru_maxrss << '\n';
    return 0;
}
