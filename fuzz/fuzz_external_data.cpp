// Target "external_data": a model and a data file, as INPUT = MODEL "=REPACK-DATA=" DATA,
// loaded from a folder that holds every kind of thing a location can name:
//   model/model.onnx        the model bytes
//   model/model.onnx.data   the data bytes (weights.bin: a hard link; sub/data.bin: a copy)
//   model/link.bin, model/sub/up.bin           symlinks to model.onnx.data, inside the folder
//   model/escape.bin, model/abs.bin            symlinks to ../outside/secret.bin
//   model/dangling.bin, model/loop.bin         a dangling symlink and one to itself
//   model/dir/, model/pipe                     a folder and a FIFO (opening it would block)
// Every tensor the product reads must come from inside the folder: its bytes are the model's
// or the data file's at the tensor's offset, never the secret. The same holds with the base
// directory moved to model/sub (where ../ escapes) and for verify().
#include "fuzz_support.h"

#include "core/inspect/verify.h"
#include "core/model/model.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <string_view>

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kSeparator = "=REPACK-DATA=";
constexpr std::string_view kSecret = "repack fuzz: bytes outside the model folder, never read\n";

struct Folder {
    fs::path model; // the model's folder
    fs::path outside; // its sibling
};

const Folder& folder()
{
    static const Folder f = [] {
        const fs::path root = repack::fuzz::scratchDir("external_data");
        Folder d{root / "model", root / "outside"};
        fs::create_directories(d.model / "sub");
        fs::create_directories(d.model / "dir");
        fs::create_directories(d.outside);
        std::string secret;
        while (secret.size() < 1 << 16)
            secret += kSecret;
        repack::fuzz::writeFile(d.outside / "secret.bin", std::as_bytes(std::span(secret)));
        repack::fuzz::writeFile(d.model / "model.onnx.data", {});
        repack::fuzz::writeFile(d.model / "sub" / "data.bin", {});
        fs::create_hard_link(d.model / "model.onnx.data", d.model / "weights.bin");
        fs::create_symlink("model.onnx.data", d.model / "link.bin");
        fs::create_symlink("../model.onnx.data", d.model / "sub" / "up.bin");
        fs::create_symlink("../outside/secret.bin", d.model / "escape.bin");
        fs::create_symlink(d.outside / "secret.bin", d.model / "abs.bin");
        fs::create_symlink("nowhere.bin", d.model / "dangling.bin");
        fs::create_symlink("loop.bin", d.model / "loop.bin");
        repack::fuzz::require(::mkfifo((d.model / "pipe").c_str(), 0644) == 0, "mkfifo");
        return d;
    }();
    return f;
}

bool isUnder(const fs::path& path, const fs::path& dir)
{
    const auto [d, p] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
    return d == dir.end();
}

// Every tensor read from `model`: an in-file payload comes from `modelBytes`, an external
// tensor from a file inside `base` whose bytes are `dataBytes` or `modelBytes`.
void checkReads(const repack::Model& model, const fs::path& base, std::string_view modelBytes,
    std::string_view dataBytes)
{
    using repack::fuzz::require;
    const fs::path realBase = fs::canonical(base);
    for (size_t i = 0; i < model.tensors().size(); ++i) {
        const repack::TensorInfo& info = model.tensors()[i];
        auto read = model.read(i);
        if (info.isExternal() && info.external->file()) {
            std::error_code ec;
            const fs::path real = fs::canonical(info.external->resolvedPath(), ec);
            require(!ec && isUnder(real, realBase), "a validated data file outside the folder");
        }
        if (!read || !info.isExternal())
            continue;
        const auto bytes = read->bytes();
        const std::string_view got(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        const uint64_t offset = info.external->offset;
        auto holds = [&](std::string_view file) {
            return offset <= file.size() && file.substr(offset, got.size()) == got;
        };
        require(holds(dataBytes) || holds(modelBytes),
            "an external tensor read bytes that are not the data file's at its offset");
    }
    repack::VerifyOptions options;
    options.bufferBytes = 4096; // tensors span several reads; 8 MiB zeroed per input is slow
    for (const repack::Problem& p : repack::verify(model, options))
        require(!p.message.empty(), "a verify problem without a message");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace repack;
    const Folder& dir = folder();
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const size_t cut = input.find(kSeparator);
    const std::string_view modelBytes = input.substr(0, cut);
    const std::string_view dataBytes = cut == std::string_view::npos
        ? std::string_view()
        : input.substr(cut + kSeparator.size());
    fuzz::writeFile(dir.model / "model.onnx", std::as_bytes(std::span(modelBytes)));
    fuzz::writeFile(dir.model / "model.onnx.data", std::as_bytes(std::span(dataBytes)));
    fuzz::writeFile(dir.model / "sub" / "data.bin", std::as_bytes(std::span(dataBytes)));

    auto loaded = Model::load(dir.model / "model.onnx");
    if (!loaded)
        return 0;
    Model& model = **loaded;
    for (const Problem& p : model.problems())
        fuzz::require(!p.message.empty() && !p.code.empty(), "a problem without code or message");
    checkReads(model, dir.model, modelBytes, dataBytes);
    model.setBaseDir(dir.model / "sub");
    checkReads(model, dir.model / "sub", modelBytes, dataBytes);
    return 0;
}
