// The files a save (or an external-data operation) copies bytes from, held still while it reads
// them, so that it never commits a mix of bytes from before and after another program rewrote
// one in place: same file, same size, other bytes at the same offsets, as python-onnx's
// save_model does when it re-saves over a data file it opens "r+b".
//
// Two guards, the first where the kernel grants it, the second always:
//  - a read lease (fcntl F_SETLEASE): refused while another process has the file open for
//    writing, and a process that opens it for writing (or truncates it) later waits until the
//    lease is released, at most the kernel's lease-break-time (45 s by default), after which the
//    lease is gone and the stamp below tells;
//  - a stamp (identity and change time, FileStamp) taken when watching starts and compared by
//    stillUnchanged(). The change time is set when a write begins, so the stamp is only taken
//    once the file's change time lies in an earlier clock tick than now: a write later in the
//    same tick cannot keep it.
// Leases need the file's owner (or CAP_LEASE) and a file system that grants them; at most
// kMaxLeases files are leased, so the number of sources stays unbounded by the open-file limit.
//
// A file on a server (a remote model's .onnx, its data files) cannot be held still: every
// response is checked against the version opened, and stillUnchanged() asks the server again
// (ByteSource::revalidate), once every byte is copied, whether it is still that version: a file
// replaced after its last read is found there, before anything is committed.
#pragma once

#include "core/file_identity.h"
#include "core/posix_file.h"
#include "core/progress.h"
#include "core/result.h"

#include <filesystem>
#include <vector>

namespace repack {

class ByteSource;
class Model;

class SourceWatch {
public:
    static constexpr size_t kMaxLeases = 64;

    // Watches the model's own file and every data file it reads (model_sources.h), each still
    // the file that was validated when the model was opened. Fails with kind Changed when one
    // is not, or when one stays open for writing by another program for longer than a short
    // wait (`cancel` stops the wait). The model outlives the watch, keeping its files.
    static Result<SourceWatch> start(const Model& model, const CancelToken* cancel);

    // Whether every watched file still holds the bytes it held when watching started, and
    // every remote one is still the version opened: kind Changed, naming the file, when one
    // was written to, truncated or replaced meanwhile; the error of the request when a server
    // cannot tell. Asked after every byte was copied, before the commit point; `cancel` stops
    // the requests.
    Status stillUnchanged(const CancelToken* cancel) const;

    // Ends the watch (leases released: writers waiting for them go on).
    void release()
    {
        m_files.clear();
        m_remote.clear();
    }

    size_t leasedCount() const;

private:
    struct Watched {
        std::filesystem::path path;
        FileStamp stamp;
        UniqueFd lease; // invalid when the file is not leased
    };
    Status watch(const std::filesystem::path& path, const FileIdentity& validated,
        const CancelToken* cancel);

    std::vector<Watched> m_files;
    std::vector<const ByteSource*> m_remote; // the model's, asked again by stillUnchanged()
};

} // namespace repack
