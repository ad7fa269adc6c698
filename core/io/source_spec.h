// Where a model is: a local path, a file on a web server, a file of a Hugging Face
// Hub repository or an object in S3, as the CLI, the app and the Python package take it, and
// where a model's external data file is beside it. Parsing only: no file or network access.
//
//   path/to/model.onnx, file:///abs/model.onnx       local
//   https://host[:port]/dir/model.onnx[?query]        a web server (http:// too)
//   hf://ORG/REPO[@REV]/PATH                          a Hub file; REV a branch, tag or commit,
//   hf://datasets/ORG/REPO[@REV]/PATH                 with '/' written %2F (refs%2Fpr%2F1)
//   https://huggingface.co/ORG/REPO/resolve/REV/PATH  the same, as the Hub's own links (blob/
//                                                     and tree/ too)
//   s3://BUCKET/KEY                                   an S3 object
// A PATH or KEY that ends in '/' names a folder of models.
#pragma once

#include "core/result.h"

#include <string>
#include <string_view>

namespace repack {

struct SourceSpec {
    enum class Kind { Local, Http, Hub, S3 };
    Kind kind = Kind::Local;

    std::string path; // Local: the path, as given (file:// decoded)
    std::string url; // Http: scheme://host[:port]/path[?query], as given
    // Hub: "model", "dataset" or "space"; "ORG/REPO"; the revision, decoded ("main" when none
    // was given); the file's path in the repository, decoded, never with ".." or a leading '/'.
    std::string repoType;
    std::string repo;
    std::string revision;
    // Hub: the file's path in the repository; S3: the object's key.
    std::string file;
    std::string bucket; // S3

    bool isRemote() const { return kind != Kind::Local; }
    bool isFolder() const;
    // What messages name it by: no query string (a signed URL's signature), no user info.
    std::string display() const;
    bool operator==(const SourceSpec&) const = default;
};

// The source `text` names; a clear error for what names none (an unknown scheme, a Hub
// repository without its organisation, a path with "..", credentials written into a URL).
Result<SourceSpec> parseSource(std::string_view text);

// The source of an external data `location` (as written in a model) of the model at `model`:
// the file beside it. A location that leaves the model's repository, bucket or the server's
// root is refused, as one that is absolute or holds a backslash or a NUL.
Result<SourceSpec> siblingSource(const SourceSpec& model, std::string_view location);

// `text` with %XX sequences decoded; an error on a '%' not followed by two hex digits.
Result<std::string> percentDecode(std::string_view text);
// `text` with every byte but RFC 3986's unreserved ones (and '/' unless `slash` is false)
// written %XX: a path as the Hub's URLs take it (as huggingface_hub writes them) and an S3 key
// as Signature Version 4's canonical URI takes it.
std::string percentEncode(std::string_view text, bool slash = true);
// `path` with every byte RFC 3986 does not allow in a path's segments (pchar: unreserved,
// sub-delims, ':' and '@') or as their separator '/' written %XX: a file on a web server.
std::string percentEncodePath(std::string_view path);

} // namespace repack
