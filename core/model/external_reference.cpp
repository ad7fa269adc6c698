#include "external_reference.h"

#include "core/paths.h"

#include "data_file.h"

#include <algorithm>
#include <charconv>
#include <sys/stat.h>

namespace fs = std::filesystem;

namespace repack {
namespace {

void report(std::vector<Problem>& problems, const TensorInfo& info, std::string_view code,
    std::string message, Severity severity = Severity::Error)
{
    problems.push_back({severity, info.qualifiedName(), std::string(code),
        info.qualifiedName() + ": " + std::move(message)});
}

// Strict non-negative decimal: no sign, no spaces, no trailing characters.
std::optional<uint64_t> parseUnsigned(std::string_view text)
{
    uint64_t value = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || ptr != end)
        return std::nullopt;
    return value;
}

} // namespace

Shared<DataLocation> DataLocations::get(
    std::string_view location, const fs::path& resolved, const std::shared_ptr<DataFile>& file)
{
    Outcomes* outcomes = m_last;
    if (!outcomes || (*outcomes)[0]->location != location) {
        auto it = m_byLocation.find(location);
        if (it == m_byLocation.end()) {
            it = m_byLocation.emplace(std::string(location), Outcomes{}).first;
            it->second[0] = Shared<DataLocation>::make({it->first, {}, {}});
        }
        outcomes = m_last = &it->second;
    }
    auto& shared = (*outcomes)[resolved.empty() ? 0 : file ? 2 : 1];
    // The paths' texts compared, not their parts: one resolver wrote both, lexically normal.
    if (!shared || shared->resolvedPath.native() != resolved.native() || shared->file != file)
        shared = Shared<DataLocation>::make({(*outcomes)[0]->location, resolved, file});
    return shared;
}

void parseExternalKeys(TensorInfo& info, const ExternalEntries& keys, DataLocations& locations,
    std::vector<Problem>& problems)
{
    ExternalRef& ref = *info.external;
    for (const auto& [key, value] : keys.entries) {
        if (key == "location") {
            ref.setShared(locations.get(value));
        } else if (key == "offset" || key == "length") {
            auto parsed = parseUnsigned(value);
            if (!parsed) {
                report(problems, info, key == "offset" ? code::BadOffset : code::BadLength,
                    std::string(key) + " '" + std::string(value)
                        + "' is not a non-negative integer");
                continue;
            }
            if (key == "offset") {
                ref.offset = *parsed;
            } else if (*parsed == UINT64_MAX) { // no tensor has as many bytes
                report(problems, info, code::BadLength,
                    "length '" + std::string(value) + "' is past any file");
                ref.length.reset();
            } else {
                ref.length = *parsed;
            }
        } else if (key == "checksum") {
            ref.checksum = std::string(value);
        } else if (key != "basepath") {
            report(problems, info, code::UnknownKey,
                "unknown external_data key '" + std::string(key) + "' is ignored",
                Severity::Warning);
        }
    }
    if (!ref.hasLocation())
        report(problems, info, code::MissingLocation,
            "data_location is EXTERNAL but no 'location' key is given");
    if (info.dataType == 8)
        report(problems, info, code::ExternalString,
            "STRING tensors cannot be stored as external data");
    if (keys.holdsData) // onnx's rule: the file wins (numpy_helper.to_array leaves such tensors)
        report(problems, info, code::ExternalWithData,
            "data_location is EXTERNAL but the tensor also holds inline data: it is read from "
            "its file, as onnx reads it, and a save drops the inline copy",
            Severity::Warning);
    if (ref.length && info.bytes && *ref.length != *info.bytes)
        report(problems, info, code::LengthMismatch,
            "length " + std::to_string(*ref.length) + " disagrees with dtype x shape ("
                + std::to_string(*info.bytes) + " bytes)");
}

LocationResolver::LocationResolver(const fs::path& baseDir, const fs::path& modelRealDir)
    : m_logicalBase(fs::absolute(baseDir).lexically_normal())
    , m_modelRealDir(modelRealDir)
{
    std::error_code ec;
    m_realBase = fs::canonical(m_logicalBase, ec);
    if (ec)
        m_realBase.clear();
}

LocationResolver::LocationResolver(SiblingOpener openSibling)
    : m_openSibling(std::move(openSibling))
{
}

std::shared_ptr<ByteSource> LocationResolver::sourceAt(const fs::path& resolved) const
{
    auto it = m_sources.find(resolved);
    return it == m_sources.end() ? nullptr : it->second;
}

Result<ResolvedLocation> LocationResolver::resolve(
    const std::string& location, std::string_view* problemCode)
{
    auto it = m_cache.find(location);
    if (it == m_cache.end())
        it = m_cache.emplace(location, resolveUncached(location)).first;
    if (!it->second.result && problemCode)
        *problemCode = it->second.code;
    return it->second.result;
}

namespace {

// A refusal of a location: a missing file is not found; every other is a reference that cannot
// be one.
auto refusal(std::string_view c, std::string message)
{
    return Error{
        std::move(message), c == code::MissingFile ? ErrorKind::NotFound : ErrorKind::Corrupt};
}

} // namespace

LocationResolver::Outcome LocationResolver::resolveUncached(const std::string& location)
{
    auto fail = [](std::string_view c, std::string message) {
        return Outcome{refusal(c, std::move(message)), c};
    };
    if (location.empty())
        return fail(code::EmptyLocation, "location is empty");
    if (const size_t nul = location.find('\0'); nul != std::string::npos) {
        std::string shown;
        for (char c : location)
            shown += c ? std::string(1, c) : std::string("\\0");
        return fail(code::LocationNul,
            "location '" + shown + "' holds a NUL byte: a reader would cut it short and read '"
                + location.substr(0, nul) + "' instead (onnx refuses it)");
    }
    if (location == kOrtMemoryMarker)
        return fail(code::MemoryAddress, "location is ONNX Runtime's in-memory marker, not a file");
    const fs::path rel(location);
    if (rel.is_absolute() || location.front() == '\\'
        || (location.size() > 1 && location[1] == ':'))
        return fail(code::AbsoluteLocation, "location '" + location + "' is an absolute path");
    const fs::path normal = rel.lexically_normal();
    if (!normal.empty() && *normal.begin() == "..")
        return fail(
            code::LocationEscapes, "location '" + location + "' escapes the model directory");
    for (const auto& part : normal)
        if (part == "..")
            return fail(
                code::LocationEscapes, "location '" + location + "' escapes the model directory");
    return m_openSibling ? resolveRemote(location) : resolveLocal(normal);
}

LocationResolver::Outcome LocationResolver::resolveRemote(const std::string& location)
{
    auto source = m_openSibling(location);
    if (!source) // not there, or not readable now: its message says which
        return Outcome{Error{source.error().message, source.error().kind}, code::MissingFile};
    const fs::path path = (*source)->displayName();
    m_sources[path] = *source;
    return Outcome{
        ResolvedLocation{path,
            FileIdentity{
                .id = {}, .size = (*source)->identity().size, .modifiedNs = 0, .bornNs = 0}},
        {}};
}

LocationResolver::Outcome LocationResolver::resolveLocal(const fs::path& normal) const
{
    auto fail = [](std::string_view c, std::string message) {
        return Outcome{refusal(c, std::move(message)), c};
    };
    const fs::path full = (m_logicalBase / normal).lexically_normal();
    struct stat lst { };
    if (::lstat(full.c_str(), &lst) != 0)
        return fail(code::MissingFile, "data file " + full.string() + " does not exist");

    std::error_code ec;
    const fs::path real = fs::canonical(full, ec);
    if (ec)
        return fail(code::MissingFile,
            "data file " + full.string() + " cannot be resolved: " + ec.message());
    if (!isUnder(real, m_logicalBase) && (m_realBase.empty() || !isUnder(real, m_realBase))
        && (m_modelRealDir.empty() || !isUnder(real, m_modelRealDir)))
        return fail(code::SymlinkEscapes,
            "data file " + full.string() + " resolves to " + real.string()
                + ", outside the model directory");
    const auto status = statusAt(real);
    if (!status)
        return fail(code::MissingFile, "data file " + full.string() + " does not exist");
    if (!status->regular)
        return fail(code::NotRegularFile, "data file " + full.string() + " is not a regular file");
    const FileIdentity identity = status->stamp.identity;
    return Outcome{ResolvedLocation{full, identity}, {}};
}

void resolveExternal(TensorInfo& info, LocationResolver& resolver,
    const std::function<std::shared_ptr<DataFile>(const fs::path&, const FileIdentity&)>& openFile,
    DataLocations& locations, std::vector<Problem>& problems)
{
    ExternalRef& ref = *info.external;
    if (!ref.hasLocation())
        return; // reported while parsing
    ref.setShared(locations.get(ref.location())); // unresolved until all is checked
    std::string_view problemCode;
    auto resolved = resolver.resolve(ref.location(), &problemCode);
    if (!resolved) {
        report(problems, info, problemCode, resolved.error().message);
        return;
    }
    const fs::path& path = resolved->path.get(); // shared by every copy of the result
    const uint64_t fileSize = resolved->identity.size;
    const std::optional<uint64_t> span
        = ref.length ? std::optional<uint64_t>(*ref.length) : std::optional<uint64_t>(info.bytes);
    if (!span) {
        ref.setShared(locations.get(ref.location(), path));
        // Without a length and a known dtype x shape size (unknown dtype), no byte range can be
        // trusted; reading would silently yield nothing. Say so unless an error already does.
        const bool reported = std::any_of(problems.begin(), problems.end(), [&](const Problem& p) {
            return p.severity == Severity::Error && p.tensor == info.qualifiedName();
        });
        if (!reported)
            report(problems, info, code::BadLength,
                "no 'length' key and the tensor's byte size is unknown");
        return;
    }
    if (ref.offset > fileSize || (span && *span > fileSize - ref.offset)) {
        ref.setShared(locations.get(ref.location(), path));
        report(problems, info, code::OutOfRange,
            "bytes " + std::to_string(ref.offset) + "+" + std::to_string(span.value_or(0))
                + " lie past the end of " + path.string() + " (" + std::to_string(fileSize)
                + " bytes)");
        return;
    }
    ref.setShared(locations.get(ref.location(), path, openFile(path, resolved->identity)));
}

} // namespace repack
