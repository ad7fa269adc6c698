#include "folder_listing.h"

#include "core/file_names.h"

#include <algorithm>
#include <sys/stat.h>

namespace fs = std::filesystem;

namespace repack {

FolderListing listFolder(const fs::path& dir, bool (*wanted)(const std::string&))
{
    FolderListing out;
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec) {
        if (ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
            out.error = ec;
        return out;
    }
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
        ListedFile f;
        f.path = it->path();
        f.name = f.path.filename().string();
        if (!wanted(f.name))
            continue;
        struct stat st { };
        if (::lstat(f.path.c_str(), &st) != 0)
            continue;
        f.symlink = S_ISLNK(st.st_mode);
        if (f.symlink && ::stat(f.path.c_str(), &st) != 0)
            continue; // a dangling link
        f.regular = S_ISREG(st.st_mode);
        f.id = fileIdOf(st);
        f.bytes = static_cast<uint64_t>(st.st_size);
        out.files.push_back(std::move(f));
    }
    out.error = ec;
    std::sort(out.files.begin(), out.files.end(),
        [](const ListedFile& a, const ListedFile& b) { return a.name < b.name; });
    return out;
}

bool isFolderModel(const std::string& name, bool regular)
{
    return regular && name.find('/') == std::string::npos && isModelName(name);
}

bool isSaveTemporary(const ListedFile& file)
{
    return file.regular && !file.symlink && isTempName(file.name);
}

} // namespace repack
