// The files a model reads bytes from, for the questions asked of all of them at once: "is each
// still the version read?" (a save, before its commit point: core/save/source_watch.h) and
// "which versions were read?" (verify and diff state those of the files on a server).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace repack {

class DataFile;
class Model;

// Each file the model reads, once: the file its .onnx payloads are read from (a remote model's
// .onnx, whose structure was fetched from it; a loaded model's own file), then every data file
// its external tensors read, in their order. Pointers into the model, valid while it keeps
// these files (until a save commits or the model is indexed again).
std::vector<const DataFile*> sourceFilesOf(const Model& model);

// A file on a server as it was read: what names it (no secret), its version (SourceIdentity:
// "etag X", a Hub file's linked ETag at the commit its name holds, ...) and its size.
struct SourceVersion {
    std::string name;
    std::string version;
    uint64_t bytes = 0;
};

// The versions of the files among them that are not on this disk, in that order.
std::vector<SourceVersion> remoteVersionsOf(const Model& model);

// "NAME (VERSION, N bytes), ...": the versions as one line of text states them.
std::string versionsText(const std::vector<SourceVersion>& versions);

} // namespace repack
