// Deterministic pseudo-random weight bytes, generated chunk by chunk so that a tensor of any
// size streams through a fixed buffer. Values look like trained weights (small, finite floats),
// so inference on a synthetic model gives comparable, NaN-free results.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace repack::bench {

class WeightFill {
public:
    // `seed` identifies the tensor; the same seed and dtype always give the same byte stream.
    WeightFill(uint64_t seed, int32_t dataType)
        : m_state(seed)
        , m_dataType(dataType)
    {
    }

    // Fills the next `out.size()` bytes of the stream. The stream does not depend on how it is
    // split into chunks as long as every chunk but the last is a multiple of 8 bytes.
    void fill(std::span<std::byte> out);

private:
    uint64_t next();

    uint64_t m_state;
    int32_t m_dataType;
};

// Mixes a model seed and a tensor number into a tensor seed.
uint64_t tensorSeed(uint64_t modelSeed, uint64_t tensorNumber);

} // namespace repack::bench
