// Who reads a file (SPEC 5a): the one answer for the save's conflicts and its removal of unused
// files, the folder save's consent and removal, the external-data operations, the folder scan
// and `clean` (and through them the desktop app). Files are matched by identity (device and
// inode, symlinks followed), never by spelling.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace repack {

class Model;

// The data files `model` reads, one entry per path, from memory (an unsaved change counts): the
// resolved path of each external tensor, and for a reference that failed validation the path
// its location names (better a file kept than one removed under a reader). None for a remote
// model: its files are on a server, and a path spelled like them is another file.
std::vector<std::filesystem::path> filesReadBy(const Model& model);

// Where readers are looked for. A model reads only files at or below its own folder (a
// location never leaves it, SPEC 3), so the models that may read a file are in its folder or a
// folder above it: a search covers, for each file, the folder it is named in and every folder
// above it up to the file system's root, and the `roots` (the output folder, the folders of the
// models being saved, the model's base directory), where a symlink may lead to it. A folder that
// cannot be listed counts as an unknown reader when it lies in a root; one above every root is
// passed over.
struct ReaderSearch {
    std::vector<std::filesystem::path> roots;
    // Models that do not count as readers (the ones being saved), by path: another name of the
    // same file (a hard link) keeps the old model once a save renames a new one over this name.
    std::vector<std::filesystem::path> exclude;
};

// How a model is said to read a file.
enum class ReadMatch {
    Identity, // it reads the same file under any name (a hard link, a symlink, another spelling)
    Name, // it names that very path (symlinks resolved): a save's temporary is "used" only by a
          // model that names it, not by one that reads its final name, another link to it
};

// The readers of one file. "Could not tell" is never "no reader": a model that cannot be read
// now (not a permission problem alone: any failure but bytes that are no ONNX model, which every
// reader refuses too), or a folder that cannot be listed, is in `unknown`.
struct Readers {
    std::vector<std::filesystem::path> models; // read it
    std::vector<std::filesystem::path> unknown; // could not be read to tell
    bool none() const { return models.empty() && unknown.empty(); }
    // `models`, then `unknown`: everything that may read the file.
    std::vector<std::filesystem::path> all() const;
    // "a.onnx reads it; b.onnx could not be read to tell whether it uses it": one clause for
    // each, file names only, "" when none.
    std::string describe() const;
};

// The readers of each of `files` (parallel). Each model is read at most once for all of them,
// by a walk of its wire structure that skips payloads by length: a sibling's weights are never
// read, so a 1 GiB inline model beside costs a few pages. A file that does not exist has no
// readers. Never throws.
std::vector<Readers> readersOf(const std::vector<std::filesystem::path>& files,
    const ReaderSearch& search, ReadMatch match = ReadMatch::Identity);
Readers readersOf(const std::filesystem::path& file, const ReaderSearch& search,
    ReadMatch match = ReadMatch::Identity);

// The folders searched for readers of `file` (see ReaderSearch), each once, absolute and
// normal.
std::vector<std::filesystem::path> readerFolders(
    const std::filesystem::path& file, const ReaderSearch& search);

} // namespace repack
