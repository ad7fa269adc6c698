#include "checksum.h"

#include <openssl/evp.h>

namespace repack {

struct Sha1::Context {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~Context() { EVP_MD_CTX_free(ctx); }
};

Sha1::Sha1()
    : m_context(std::make_unique<Context>())
{
    EVP_DigestInit_ex(m_context->ctx, EVP_sha1(), nullptr);
}

Sha1::~Sha1() = default;

void Sha1::update(std::span<const std::byte> data)
{
    EVP_DigestUpdate(m_context->ctx, data.data(), data.size());
}

std::string Sha1::hexDigest()
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(m_context->ctx, digest, &length);
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
