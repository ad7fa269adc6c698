// repack-genmodel: writes LLM-shaped synthetic ONNX models of any size for benchmarks and
// large test fixtures, and the bundled sample model (--sample).
#include "model_writer.h"
#include "sample_model.h"
#include "synthetic_model.h"

#include "core/format.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <iostream>

namespace {

// Accepts what repack::parseSize accepts: "1024", "64K", "512M", "4GiB".
const CLI::Validator kSize(
    [](std::string& text) -> std::string {
        return repack::parseSize(text) ? "" : "not a size: " + text + " (try 64K, 512M, 4GiB)";
    },
    "SIZE");

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"Write synthetic LLM-like ONNX models (or the bundled sample) for benchmarks.",
        "repack-genmodel"};
    std::string out;
    std::string storage = "external";
    std::string sizeText = "64M", thresholdText = "1K", alignText = "0", alignFromText = "1M";
    repack::bench::LlmShape shape;
    repack::bench::ExternalOptions external;
    bool sample = false;
    app.add_option("--out,-o", out, "The .onnx file to write")->required();
    app.add_flag("--sample", sample, "Write the bundled sample model instead");
    app.add_option("--weights", sizeText, "Total weight bytes (1G, 4GiB, 512M, ...)")->check(kSize);
    app.add_option("--storage", storage, "external: one data file beside the model; inline")
        ->check(CLI::IsMember({"external", "inline"}));
    app.add_option("--tensors", shape.tensors, "Approximate tensor count (0: natural)");
    app.add_option("--hidden", shape.hidden, "Hidden size d (0: chosen from the sizes)");
    app.add_option("--seed", shape.seed, "Seed of the weight bytes");
    app.add_option("--data", external.dataName, "Data file name (default <model>.data)");
    app.add_option("--threshold", thresholdText, "External from this many bytes (default 1K)")
        ->check(kSize);
    app.add_option("--align", alignText, "Align big tensors to this many bytes (0: dense)")
        ->check(kSize);
    app.add_option("--align-threshold", alignFromText, "Align tensors this big (default 1M)")
        ->check(kSize);
    CLI11_PARSE(app, argc, argv);
    // Validated above (and the defaults are valid), so value() cannot fail.
    shape.weightBytes = repack::parseSize(sizeText).value();
    external.threshold = repack::parseSize(thresholdText).value();
    external.alignment = repack::parseSize(alignText).value();
    external.alignThreshold = repack::parseSize(alignFromText).value();

    const auto start = std::chrono::steady_clock::now();
    repack::Status status;
    if (sample) {
        status = repack::bench::writeSampleModel(out);
    } else {
        const auto model = repack::bench::planLlmModel(shape);
        std::cout << out << ": " << model.layers << " layers, hidden " << model.hidden << ", "
                  << model.weights.size() << " tensors, " << repack::formatBytes(model.totalBytes())
                  << " of weights, " << storage << '\n';
        status = storage == "inline" ? repack::bench::writeInline(model, out)
                                     : repack::bench::writeExternal(model, out, external);
    }
    if (!status) {
        std::cerr << "repack-genmodel: " << status.error().message << '\n';
        return 1;
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    std::cout << "wrote " << out << " in " << took.count() << " s\n";
    return 0;
}
