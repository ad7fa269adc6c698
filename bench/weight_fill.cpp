#include "weight_fill.h"

#include "core/dtype.h"

#include <cstring>

namespace repack::bench {
namespace {

// Two float32 per word: random sign and mantissa, exponent 2^-7, so |x| in [0.0078, 0.0156).
uint64_t asFloat32Pair(uint64_t r)
{
    constexpr uint64_t kExponent = 0x3C000000ull | (0x3C000000ull << 32);
    constexpr uint64_t kKeep = 0x807FFFFFull | (0x807FFFFFull << 32);
    return (r & kKeep) | kExponent;
}

// Four float16 per word with the same range: exponent field 8 (2^-7).
uint64_t asFloat16Quad(uint64_t r)
{
    constexpr uint64_t kExponent = 0x2000200020002000ull;
    constexpr uint64_t kKeep = 0x83FF83FF83FF83FFull;
    return (r & kKeep) | kExponent;
}

} // namespace

uint64_t WeightFill::next()
{
    // splitmix64: fast, and good enough that compression cannot shortcut the benchmarks.
    uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void WeightFill::fill(std::span<std::byte> out)
{
    auto shape = [this](uint64_t r) {
        switch (m_dataType) {
        case dtype::Float:
            return asFloat32Pair(r);
        case dtype::Float16:
            return asFloat16Quad(r);
        default:
            return r;
        }
    };
    size_t done = 0;
    for (; done + 8 <= out.size(); done += 8) {
        const uint64_t word = shape(next()); // little-endian host: bytes land in ONNX order
        std::memcpy(out.data() + done, &word, 8);
    }
    if (done < out.size()) {
        const uint64_t word = shape(next());
        std::memcpy(out.data() + done, &word, out.size() - done);
    }
}

uint64_t tensorSeed(uint64_t modelSeed, uint64_t tensorNumber)
{
    WeightFill mix(modelSeed ^ (tensorNumber * 0xD1B54A32D192ED03ull), dtype::Undefined);
    std::byte word[8];
    mix.fill(word);
    uint64_t seed = 0;
    std::memcpy(&seed, word, 8);
    return seed;
}

} // namespace repack::bench
