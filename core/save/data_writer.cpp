#include "data_writer.h"

#include "core/checksum.h"
#include "core/mapped_memory.h"
#include "core/model/model.h"
#include "core/model/typed_data.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/sendfile.h>
#include <unistd.h>

namespace repack {
namespace {

constexpr size_t kBufferBytes = 8u << 20;
constexpr uint64_t kCopyChunk = 64u << 20; // progress and cancellation granularity
constexpr uint64_t kWritebackChunk = 32u << 20;
constexpr uint64_t kWritebackLag = 64u << 20; // the page cache a copy keeps: see startWriteback()
// Source files kept open at once: a model stored one file per tensor must not run into the
// open-file limit (1024 by default, often less in containers).
constexpr size_t kMaxOpenSources = 32;

// An inline tensor whose raw_data Model::load left in the .onnx (not materialized). Not a
// tensor left out of the protos (Model::loadProtosLeavingOut), alone or with its node: its
// bytes go back whole.
bool payloadInModelFile(const TensorInfo& t)
{
    return t.inlineRange && t.proto && t.proto->raw_data().empty();
}

} // namespace

DataWriter::DataWriter(const Model& model, const SavePlan& plan, const SaveOptions& options)
    : m_model(model)
    , m_plan(plan)
    , m_options(options)
{
    m_progress.bytesTotal = plan.externalBytes;
    const auto& tensors = model.tensors();
    for (size_t i = 0; i < tensors.size(); ++i)
        if (tensors[i].isExternal() && !plan.tensors[i].external)
            m_progress.bytesTotal += tensors[i].byteSize();
        else if (!plan.tensors[i].external && payloadInModelFile(tensors[i]))
            m_progress.bytesTotal += tensors[i].inlineRange->length; // spliced into the model
}

Status DataWriter::advance(size_t tensor, uint64_t bytes)
{
    m_progress.bytesDone += bytes;
    m_progress.tensor = m_model.tensors()[tensor].name;
    if (m_options.progress)
        m_options.progress(m_progress);
    if (m_options.cancel && m_options.cancel->isCancelled())
        return cancelled("save");
    return {};
}

// Starts writing finished ranges to disk while copying goes on, and waits only for data well
// behind the copy, so the final fsync finds little left to do and dirty memory stays bounded
// (about kWritebackLag) without stalling on I/O that has only just begun. The pages waited for
// are dropped from the page cache (clean by then: nothing is lost, the final fsync still makes
// them durable), and the next pages of the copy reuse them. New pages are memory free for
// long, which a virtual machine's host may have taken back (free page reporting): the kernel
// filled those several times slower than pages just freed, and the save waited on it
// (bench/README.md has the figures).
void DataWriter::startWriteback(int targetFd, uint64_t end)
{
    if (end < m_writebackStart + kWritebackChunk)
        return;
    ::sync_file_range(targetFd, static_cast<off_t>(m_writebackStart),
        static_cast<off_t>(end - m_writebackStart), SYNC_FILE_RANGE_WRITE);
    m_writebackStart = end;
    if (end > m_writebackDone + kWritebackLag) {
        const uint64_t upTo = end - kWritebackLag;
        ::sync_file_range(targetFd, static_cast<off_t>(m_writebackDone),
            static_cast<off_t>(upTo - m_writebackDone),
            SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
        ::posix_fadvise(targetFd, static_cast<off_t>(m_writebackDone),
            static_cast<off_t>(upTo - m_writebackDone), POSIX_FADV_DONTNEED);
        m_writebackDone = upTo;
    }
}

Result<DataWriter::SourceRange> DataWriter::sourceOf(size_t tensor) const
{
    const TensorInfo& t = m_model.tensors()[tensor];
    if (t.isExternal()) {
        if (!t.external->file())
            return Error::corrupt(t.qualifiedName() + ": its external data failed validation");
        return SourceRange{t.external->file().get(), t.external->offset};
    }
    const DataFile* model = m_model.inFileSource();
    if (!t.inlineRange || !model)
        return Error::internal(t.qualifiedName() + ": its bytes are not in a file");
    if (t.inlineRange->length != t.byteSize())
        return Error::corrupt(t.qualifiedName() + ": raw_data holds "
            + std::to_string(t.inlineRange->length) + " bytes, dtype x shape needs "
            + std::to_string(t.byteSize()));
    return SourceRange{model, t.inlineRange->offset};
}

Result<int> DataWriter::sourceFd(size_t tensor, const SourceRange& source)
{
    const TensorInfo& t = m_model.tensors()[tensor];
    const auto& path = source.file->path();
    auto it = std::find_if(
        m_sources.begin(), m_sources.end(), [&](const Source& s) { return s.path == path; });
    if (it != m_sources.end()) {
        std::rotate(it, it + 1, m_sources.end());
        return m_sources.back().fd.get();
    }
    auto fd = UniqueFd::openRead(path);
    if (!fd)
        return Error{t.qualifiedName() + ": " + fd.error().message, fd.error().kind};
    // Never read a file other than the one validated: a replaced or rewritten file would give
    // other bytes at the old offsets.
    auto identity = identityOf(fd->get());
    if (!identity || !(*identity == source.file->identity()))
        return Error{t.qualifiedName() + ": " + path.string()
                + " changed since the model was opened (replaced or modified); reopen the model",
            ErrorKind::Changed};
    ::posix_fadvise(fd->get(), 0, 0, POSIX_FADV_SEQUENTIAL);
    if (m_sources.size() >= kMaxOpenSources)
        m_sources.erase(m_sources.begin());
    m_sources.push_back({path, std::move(*fd)});
    return m_sources.back().fd.get();
}

Status DataWriter::readSource(
    size_t tensor, const SourceRange& source, uint64_t at, std::span<std::byte> into)
{
    const TensorInfo& t = m_model.tensors()[tensor];
    const uint64_t offset = source.offset + at;
    Status read = Error::internal("not read");
    if (source.file->isLocal()) {
        auto src = sourceFd(tensor, source);
        if (!src)
            return src.error();
        read = preadExact(*src, into, offset, source.file->path());
    } else {
        read = source.file->readInto(offset, into, m_options.cancel);
    }
    if (!read)
        return Error{t.qualifiedName() + ": " + read.error().message, read.error().kind};
    return {};
}

Status DataWriter::checkDigest(size_t tensor, const std::string& actual)
{
    const TensorInfo& t = m_model.tensors()[tensor];
    const std::string& expected = *t.external->checksum;
    if (expected.empty()) {
        if (m_options.checksum)
            m_checksums[tensor] = actual;
        return {};
    }
    if (actual == expected) {
        m_checksums[tensor] = actual;
        return {};
    }
    if (!m_options.allowCorrupt)
        return Error::corrupt(t.qualifiedName() + ": the bytes in "
            + t.external->resolvedPath().string() + " do not match its checksum (SHA-1 " + actual
            + ", the checksum key says " + expected
            + "); refusing to carry corrupt bytes forward (--allow-corrupt keeps them "
              "and their old checksum)");
    m_checksums[tensor] = expected; // the evidence stays
    return {};
}

Status DataWriter::copyRange(size_t tensor, const SourceRange& source, uint64_t length,
    int targetFd, uint64_t targetOffset, const std::filesystem::path& targetPath, bool verify,
    bool countProgress)
{
    const TensorInfo& t = m_model.tensors()[tensor];
    const bool local = source.file->isLocal();
    auto src = local ? sourceFd(tensor, source) : Result<int>(-1);
    if (!src)
        return src.error();
    const bool hashing = verify && (m_options.checksum || !t.external->checksum->empty());
    auto progressed = [&](uint64_t bytes) { return advance(tensor, countProgress ? bytes : 0); };
    Sha1 sha;
    uint64_t done = 0;
    // In the kernel: copy_file_range (one file system), else sendfile (across file systems,
    // e.g. from a memfd or tmpfs: one copy instead of two), else through the buffer. A remote
    // file's bytes come through the buffer, fetched straight into it.
    enum class Copy { FileRange, SendFile, Buffer };
    Copy mode = hashing || !local ? Copy::Buffer : Copy::FileRange;
    while (done < length) {
        const uint64_t chunk = std::min(kCopyChunk, length - done);
        if (mode != Copy::Buffer) {
            loff_t in = static_cast<loff_t>(source.offset + done);
            loff_t out = static_cast<loff_t>(targetOffset + done);
            ssize_t n = -1;
            if (mode == Copy::FileRange) {
                n = ::copy_file_range(*src, &in, targetFd, &out, chunk, 0);
            } else if (::lseek(targetFd, out, SEEK_SET) == out) { // sendfile writes at the position
                off_t from = static_cast<off_t>(in);
                n = ::sendfile(targetFd, *src, &from, chunk);
            }
            if (n < 0
                && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
                mode = mode == Copy::FileRange ? Copy::SendFile : Copy::Buffer;
                continue;
            }
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                return Error::io(
                    systemMessage("cannot copy " + t.qualifiedName() + " into", targetPath));
            if (n == 0)
                return Error::changed(t.qualifiedName() + ": " + source.file->path().string()
                    + " ended while copying (truncated underneath?)");
            done += static_cast<uint64_t>(n);
            startWriteback(targetFd, targetOffset + done);
            if (Status s = progressed(static_cast<uint64_t>(n)); !s)
                return s;
            continue;
        }
        if (!m_buffer)
            m_buffer.emplace(kBufferBytes);
        const size_t piece = static_cast<size_t>(std::min<uint64_t>(chunk, m_buffer->size()));
        std::span<std::byte> view(m_buffer->data(), piece);
        if (Status s = readSource(tensor, source, done, view); !s)
            return s;
        if (hashing)
            sha.update(view);
        if (Status s = pwriteAll(targetFd, view, targetOffset + done, targetPath); !s)
            return s;
        done += piece;
        startWriteback(targetFd, targetOffset + done);
        if (Status s = progressed(piece); !s)
            return s;
    }
    return hashing ? checkDigest(tensor, sha.hexDigest()) : Status{};
}

Status DataWriter::writeInline(
    size_t tensor, int targetFd, uint64_t targetOffset, const std::filesystem::path& targetPath)
{
    auto bytes = m_model.read(tensor);
    if (!bytes)
        return bytes.error();
    const auto view = bytes->bytes();
    if (view.size() != m_plan.tensors[tensor].length)
        return Error::corrupt(m_model.tensors()[tensor].qualifiedName() + ": holds "
            + std::to_string(view.size()) + " bytes, dtype x shape needs "
            + std::to_string(m_plan.tensors[tensor].length));
    const std::string where = bytes->where(m_model.tensors()[tensor]);
    if (m_options.checksum) {
        Sha1 sha;
        if (Status s = readMapped(where, [&] { sha.update(view); }); !s)
            return s;
        m_checksums[tensor] = sha.hexDigest();
    }
    return writeBytes(tensor, *bytes, targetFd, targetOffset, targetPath, true);
}

Status DataWriter::writeBytes(size_t tensor, const TensorBytes& bytes, int targetFd,
    uint64_t targetOffset, const std::filesystem::path& targetPath, bool countProgress)
{
    const auto view = bytes.bytes();
    const std::string where = bytes.where(m_model.tensors()[tensor]);
    // Lent bytes are resident memory: the kernel copies them as fast as from a buffer. Others
    // go through the page-aligned buffer: the kernel copies from the model's memory (16 bytes
    // off a page) several times slower than from an aligned buffer, more than the extra memcpy.
    const bool direct = bytes.isLent();
    if (!direct && !m_buffer)
        m_buffer.emplace(kBufferBytes);
    for (size_t done = 0; done < view.size();) {
        const size_t piece = std::min<size_t>(
            direct ? static_cast<size_t>(kCopyChunk) : m_buffer->size(), view.size() - done);
        std::span<const std::byte> from = view.subspan(done, piece);
        if (!direct) {
            if (Status s
                = readMapped(where, [&] { std::memcpy(m_buffer->data(), from.data(), piece); });
                !s)
                return s;
            from = {m_buffer->data(), piece};
        }
        if (Status s = pwriteAll(targetFd, from, targetOffset + done, targetPath); !s)
            return s;
        done += piece;
        startWriteback(targetFd, targetOffset + done);
        if (Status s = advance(tensor, countProgress ? piece : 0); !s)
            return s;
    }
    return {};
}

void DataWriter::startTarget()
{
    m_writebackStart = 0;
    m_writebackDone = 0;
}

std::optional<uint64_t> DataWriter::payloadLength(size_t tensor) const
{
    const TensorInfo& t = m_model.tensors()[tensor];
    if (t.isExternal())
        return t.external->file() ? std::optional<uint64_t>(t.byteSize()) : std::nullopt;
    if (payloadInModelFile(t) && m_model.inFileSource())
        return t.inlineRange->length;
    return std::nullopt;
}

Status DataWriter::copyPayload(size_t tensor, int targetFd, uint64_t targetOffset,
    const std::filesystem::path& targetPath, bool countProgress)
{
    const TensorInfo& t = m_model.tensors()[tensor];
    if (t.isExternal()) {
        auto source = sourceOf(tensor);
        if (!source)
            return source.error();
        return copyRange(
            tensor, *source, t.byteSize(), targetFd, targetOffset, targetPath, true, countProgress);
    }
    // A payload left in the .onnx goes on as it is, whatever its size (corrupt bytes carried
    // under allowCorrupt included): the model never reinterprets inline bytes.
    if (t.inlineRange && m_model.lendsPayloads()) { // the file leaves it out: from its lender
        auto bytes = m_model.read(tensor);
        if (!bytes)
            return bytes.error();
        if (bytes->bytes().size() != t.inlineRange->length)
            return Error::changed(t.qualifiedName() + ": holds "
                + std::to_string(bytes->bytes().size()) + " bytes now, "
                + std::to_string(t.inlineRange->length) + " when the save began");
        return writeBytes(tensor, *bytes, targetFd, targetOffset, targetPath, countProgress);
    }
    const DataFile* model = m_model.inFileSource();
    if (!t.inlineRange || !model)
        return Error::internal(t.qualifiedName() + ": its bytes are not in a file");
    const SourceRange source{model, t.inlineRange->offset};
    return copyRange(tensor, source, t.inlineRange->length, targetFd, targetOffset, targetPath,
        false, countProgress);
}

Status DataWriter::copyCopied(size_t tensor, const DataFile& file, uint64_t offset, uint64_t length,
    int targetFd, uint64_t targetOffset, const std::filesystem::path& targetPath)
{
    return copyRange(tensor, SourceRange{&file, offset}, length, targetFd, targetOffset, targetPath,
        false, false);
}

Status DataWriter::write(size_t file, int targetFd, const std::filesystem::path& targetPath)
{
    startTarget();
    // A safetensors header first; its length is where the plan's offsets begin.
    if (file < m_plan.fileHeaders.size() && !m_plan.fileHeaders[file].empty()) {
        const std::string& header = m_plan.fileHeaders[file];
        if (Status s = pwriteAll(
                targetFd, std::as_bytes(std::span(header.data(), header.size())), 0, targetPath);
            !s)
            return s;
    }
    for (size_t tensor : m_plan.fileOrder[file]) {
        const uint64_t offset = m_plan.tensors[tensor].offset;
        // Bytes that lie in a file (external data, or a payload left in the .onnx) are copied
        // file to file; the others come from the model's memory.
        const TensorInfo& t = m_model.tensors()[tensor];
        // Lent payloads (Model::loadDetached) are not in the file: they come from memory.
        const bool inFile = t.isExternal() || (payloadInModelFile(t) && !m_model.lendsPayloads());
        auto source = inFile ? sourceOf(tensor) : Result<SourceRange>(Error::internal("not run"));
        Status s = inFile ? (source ? copyRange(tensor, *source, t.byteSize(), targetFd, offset,
                                 targetPath, true, true)
                                    : Status(source.error()))
                          : writeInline(tensor, targetFd, offset, targetPath);
        if (!s)
            return s;
    }
    // Gaps between aligned tensors stay holes, which read back as zeros; set the final size.
    if (::ftruncate(targetFd, static_cast<off_t>(m_plan.fileBytes[file])) != 0)
        return Error::io(systemMessage("cannot size", targetPath));
    return fsyncFile(targetFd, targetPath);
}

Result<std::string> DataWriter::readExternal(size_t tensor)
{
    const TensorInfo& t = m_model.tensors()[tensor];
    auto source = sourceOf(tensor);
    if (!source)
        return source.error();
    std::string bytes(t.byteSize(), '\0');
    auto view = std::as_writable_bytes(std::span(bytes.data(), bytes.size()));
    if (Status s = readSource(tensor, *source, 0, view); !s)
        return s.error();
    if (!t.external->checksum->empty())
        if (Status s = checkDigest(tensor, Sha1::of(view)); !s)
            return s.error();
    if (Status s = advance(tensor, bytes.size()); !s)
        return s.error();
    return bytes;
}

} // namespace repack
