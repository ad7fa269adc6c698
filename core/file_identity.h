// Which file a name leads to. One place for the two questions the tool asks of names: "is this
// the same file?" (a hard link, a symlink or another spelling of a path must not pass for a
// different file) and "is this still the file I checked?" (a file replaced or rewritten under
// the same name must never be read at offsets meant for the old one).
#pragma once

#include "result.h"

#include <compare>
#include <cstdint>
#include <filesystem>
#include <optional>

struct stat;

namespace repack {

// A file, whatever name (hard link, symlink) leads to it: device and inode.
struct FileId {
    uint64_t device = 0;
    uint64_t inode = 0;
    auto operator<=>(const FileId&) const = default;
};

// A file as it was when checked: the same FileId with another size or modification time is a
// file rewritten in place. The birth time (statx's btime, where the file system keeps one; 0
// elsewhere) tells a new file from the old one when it got the old one's inode number (ext4
// reuses a freed inode at once), its size and its modification time (within one clock tick,
// or set back by `cp -p`, `rsync -t` or `touch -r`): no program can set a birth time.
struct FileIdentity {
    FileId id;
    uint64_t size = 0;
    int64_t modifiedNs = 0;
    int64_t bornNs = 0;
    bool operator==(const FileIdentity&) const = default;
};

// A file's identity and its change time (ctime), which every write, truncation, chmod or link
// moves and which, unlike the modification time, no program can set back: the same stamp twice
// means no byte changed in between (see SourceWatch for the clock tick this needs).
struct FileStamp {
    FileIdentity identity;
    int64_t changedNs = 0;
    bool operator==(const FileStamp&) const = default;
};

// What statx says of a file: its stamp, and whether it is a regular file.
struct FileStatus {
    FileStamp stamp;
    bool regular = false;
};

FileId fileIdOf(const struct stat& st);
// The status of the file `fd` is open on, or of the file `path` leads to (symlinks followed;
// nullopt when it leads nowhere).
Result<FileStatus> statusOf(int fd);
std::optional<FileStatus> statusAt(const std::filesystem::path& path);
// The identity of the file `fd` is open on.
Result<FileIdentity> identityOf(int fd);
// The file `path` leads to (symlinks followed); nullopt when it leads nowhere stat() can see.
std::optional<FileId> fileIdOf(const std::filesystem::path& path);
// Whether `path` still names the file with `identity` (false when it cannot be opened).
bool namesFile(const std::filesystem::path& path, const FileIdentity& identity);

enum class Sameness { Same, Different, CouldNotTell };
// Whether two names lead to one file. CouldNotTell when either cannot be stat()ed: a caller
// about to delete or overwrite treats that as Same, never as Different.
Sameness sameFile(const std::filesystem::path& a, const std::filesystem::path& b);
// Same file, or (when either does not exist yet) the same absolute, normalised path: the
// question "would writing `a` touch `b`?" for names that a save may be about to create.
bool samePathOrFile(const std::filesystem::path& a, const std::filesystem::path& b);

} // namespace repack
