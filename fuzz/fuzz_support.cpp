#include "fuzz_support.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace fs = std::filesystem;

namespace repack::fuzz {

namespace {

struct Scratch {
    fs::path path;
    ~Scratch()
    {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

} // namespace

const fs::path& scratchDir(std::string_view target)
{
    static const Scratch scratch = [target] {
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = (tmp && *tmp ? std::string(tmp) : std::string("/tmp"))
            + "/repack-fuzz-" + std::string(target) + "-XXXXXX";
        if (!mkdtemp(pattern.data())) {
            std::perror("repack fuzz: mkdtemp");
            std::abort();
        }
        return Scratch{pattern};
    }();
    return scratch.path;
}

void writeFile(const fs::path& path, std::span<const std::byte> bytes)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    require(fd >= 0, "cannot create a scratch file");
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        require(n > 0, "cannot write a scratch file");
        done += size_t(n);
    }
    ::close(fd);
}

void require(bool ok, const std::string& what)
{
    if (ok)
        return;
    std::fprintf(stderr, "repack fuzz: broken promise: %s\n", what.c_str());
    std::abort();
}

} // namespace repack::fuzz
