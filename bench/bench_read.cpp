// repack-bench-read: reads a file front to back with pread into one buffer and prints MB/s.
// --misalign shifts the buffer off page alignment: on some CPUs the kernel's copy into a
// destination that is not 64-byte aligned is several times slower, which is what a plain
// std::vector<std::byte> buffer (malloc returns 16-byte alignment) gets.
#include "core/posix_file.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>

int main(int argc, char** argv)
{
    CLI::App app{"Sequential pread throughput of a file", "repack-bench-read"};
    std::string path;
    size_t bufferBytes = 8u << 20;
    size_t misalign = 0;
    app.add_option("FILE", path, "The file to read")->required();
    app.add_option("--buffer", bufferBytes, "Bytes per pread (default 8 MiB)")
        ->check(CLI::PositiveNumber);
    app.add_option("--misalign", misalign, "Offset of the buffer from a page boundary");
    CLI11_PARSE(app, argc, argv);

    auto fd = repack::UniqueFd::openRead(path);
    if (!fd) {
        std::cerr << "repack-bench-read: " << fd.error().message << '\n';
        return 1;
    }
    constexpr size_t kPage = 4096;
    const size_t allocation = (bufferBytes + misalign + kPage) / kPage * kPage;
    std::unique_ptr<std::byte, decltype(&std::free)> storage(
        static_cast<std::byte*>(std::aligned_alloc(kPage, allocation)), &std::free);
    std::span<std::byte> buffer(storage.get() + misalign, bufferBytes);
    std::fill(storage.get(), storage.get() + allocation, std::byte{0}); // fault pages in first

    const auto start = std::chrono::steady_clock::now();
    uint64_t offset = 0;
    const uint64_t size = fd->size().value();
    while (offset < size) {
        const size_t chunk = static_cast<size_t>(std::min<uint64_t>(bufferBytes, size - offset));
        if (auto s = repack::preadExact(fd->get(), buffer.first(chunk), offset, path); !s) {
            std::cerr << "repack-bench-read: " << s.error().message << '\n';
            return 1;
        }
        offset += chunk;
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    std::cout << "bytes " << size << "\nms " << took.count() * 1000 << "\nmb_per_s "
              << size / took.count() / 1e6 << '\n';
    return 0;
}
