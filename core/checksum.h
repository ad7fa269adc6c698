// Incremental SHA-1 (OpenSSL's libcrypto, loaded the first time a digest is made: core/
// shared_library.h), the digest ONNX's external_data "checksum" key holds in hex. A digest made
// where libcrypto cannot be loaded throws LibraryUnavailable (guardMemory: an Io error).
#pragma once

#include "result.h"

#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace repack {

// Whether digests can be made: libcrypto loads (once), or the Io error saying why not. Code with
// an error path asks this first; a Sha1 made after it succeeded never throws.
Status checksumsAvailable();

class Sha1 {
public:
    Sha1();
    ~Sha1();
    Sha1(const Sha1&) = delete;
    Sha1& operator=(const Sha1&) = delete;

    void update(std::span<const std::byte> data);
    std::string hexDigest(); // finishes the hash: 40 lower-case hex digits

    static std::string of(std::span<const std::byte> data);

private:
    struct Context;
    std::unique_ptr<Context> m_context;
};

} // namespace repack
