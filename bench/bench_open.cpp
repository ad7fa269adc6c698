// repack-bench-open: times what opening a model in the tool costs (parse, index, validate,
// layout, the inspect report) and reports this process's peak RSS. Weight bytes are never
// read, so the time should not depend on the weight size.
#include "core/file_layout.h"
#include "core/model.h"
#include "core/report.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <sys/resource.h>
#include <vector>

int main(int argc, char** argv)
{
    CLI::App app{"Time Model::load + computeLayout + inspectJson", "repack-bench-open"};
    std::string path;
    int runs = 5;
    app.add_option("MODEL", path, "The .onnx file")->required();
    app.add_option("--runs", runs, "Timed runs (median reported)")->check(CLI::PositiveNumber);
    CLI11_PARSE(app, argc, argv);

    std::vector<double> ms;
    size_t tensors = 0, files = 0, jsonBytes = 0;
    for (int i = 0; i < runs; ++i) {
        const auto start = std::chrono::steady_clock::now();
        auto model = repack::Model::load(path);
        if (!model) {
            std::cerr << "repack-bench-open: " << model.error().message << '\n';
            return 1;
        }
        files = repack::computeLayout(**model).size();
        jsonBytes = repack::inspectJson(**model).dump().size();
        tensors = (*model)->tensors().size();
        const std::chrono::duration<double, std::milli> took
            = std::chrono::steady_clock::now() - start;
        ms.push_back(took.count());
    }
    std::sort(ms.begin(), ms.end());
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    // One "key value" per line, for scripts.
    std::cout << "tensors " << tensors << "\nfiles " << files << "\njson_bytes " << jsonBytes
              << "\nmedian_ms " << ms[ms.size() / 2] << "\nmin_ms " << ms.front() << "\nmax_ms "
              << ms.back() << "\npeak_rss_kib " << usage.ru_maxrss << '\n';
    return 0;
}
