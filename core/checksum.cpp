#include "checksum.h"

#include "shared_library.h"

#include <openssl/evp.h>
#include <openssl/opensslv.h>

namespace repack {

namespace {

// The libcrypto functions a digest calls, with libcrypto's own signatures.
struct CryptoLibrary {
    EVP_MD_CTX* (*contextNew)() = nullptr;
    void (*contextFree)(EVP_MD_CTX* context) = nullptr;
    const EVP_MD* (*sha1)() = nullptr;
    int (*init)(EVP_MD_CTX* context, const EVP_MD* type, ENGINE* engine) = nullptr;
    int (*update)(EVP_MD_CTX* context, const void* data, size_t length) = nullptr;
    int (*final)(EVP_MD_CTX* context, unsigned char* digest, unsigned int* length) = nullptr;
};

// The libcrypto the headers were built for, loaded the first time a checksum is computed.
const Result<CryptoLibrary>& loadedCrypto()
{
    static const Result<CryptoLibrary> loaded = []() -> Result<CryptoLibrary> {
        const std::string soname = "libcrypto.so." + std::to_string(OPENSSL_VERSION_MAJOR);
        auto opened = openSharedLibrary(soname, "a SHA-1 checksum", "libssl3");
        if (!opened)
            return opened.error();
        CryptoLibrary crypto;
        SymbolBinder need(*opened);
        need("EVP_MD_CTX_new", crypto.contextNew);
        need("EVP_MD_CTX_free", crypto.contextFree);
        need("EVP_sha1", crypto.sha1);
        need("EVP_DigestInit_ex", crypto.init);
        need("EVP_DigestUpdate", crypto.update);
        need("EVP_DigestFinal_ex", crypto.final);
        if (Status s = need.done(soname, "libcrypto"); !s)
            return s.error();
        return crypto;
    }();
    return loaded;
}

// loadedCrypto(), or LibraryUnavailable naming it.
const CryptoLibrary& crypto()
{
    const Result<CryptoLibrary>& loaded = loadedCrypto();
    if (!loaded)
        throw LibraryUnavailable(loaded.error().message);
    return *loaded;
}

} // namespace

Status checksumsAvailable()
{
    const Result<CryptoLibrary>& loaded = loadedCrypto();
    if (!loaded)
        return loaded.error();
    return {};
}

struct Sha1::Context {
    const CryptoLibrary& crypto = repack::crypto();
    EVP_MD_CTX* ctx = crypto.contextNew();
    ~Context() { crypto.contextFree(ctx); }
};

Sha1::Sha1()
    : m_context(std::make_unique<Context>())
{
    m_context->crypto.init(m_context->ctx, m_context->crypto.sha1(), nullptr);
}

Sha1::~Sha1() = default;

void Sha1::update(std::span<const std::byte> data)
{
    m_context->crypto.update(m_context->ctx, data.data(), data.size());
}

std::string Sha1::hexDigest()
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    m_context->crypto.final(m_context->ctx, digest, &length);
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(length * 2);
    for (unsigned int i = 0; i < length; ++i) {
        out.push_back(kHex[digest[i] >> 4]);
        out.push_back(kHex[digest[i] & 0xf]);
    }
    return out;
}

std::string Sha1::of(std::span<const std::byte> data)
{
    Sha1 sha;
    sha.update(data);
    return sha.hexDigest();
}

} // namespace repack
