// Names sorted and matched by hash (a model of 100,000 tensors has as many names): a name's hash
// cut to 32 bits, packed with a position into one 64-bit word, so that sorting the words in place
// orders them by hash and equal hashes by position.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

namespace repack {

inline uint32_t nameHash(std::string_view name)
{
    return static_cast<uint32_t>(std::hash<std::string_view>{}(name));
}

struct HashedPosition {
    static uint64_t pack(uint32_t hash, uint32_t position)
    {
        return uint64_t(hash) << 32 | position; // fewer than 2^32 tensors fit in memory
    }
    static uint32_t hash(uint64_t packed) { return static_cast<uint32_t>(packed >> 32); }
    static uint32_t position(uint64_t packed) { return static_cast<uint32_t>(packed); }
};

} // namespace repack
