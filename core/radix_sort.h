// A stable sort by an unsigned integer key, a byte of the key per pass: what the index sorts by
// hashes of names (hundreds of thousands of them), in a fraction of std::sort's comparisons.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace repack {

// Sorts `items` by key(item) (an unsigned integer), keeping the order of items with equal keys.
// Passes over bytes that are the same in every key are skipped.
template <typename T, typename Key> void radixSortBy(std::vector<T>& items, Key key)
{
    using K = std::invoke_result_t<Key, const T&>;
    static_assert(std::is_integral_v<K> && std::is_unsigned_v<K>, "an unsigned integer key");
    if (items.size() < 2)
        return;
    std::vector<T> scratch(items.size());
    for (unsigned shift = 0; shift < 8 * sizeof(K); shift += 8) {
        std::array<size_t, 256> counts{};
        for (const T& item : items)
            ++counts[(key(item) >> shift) & 0xff];
        if (counts[(key(items.front()) >> shift) & 0xff] == items.size())
            continue; // one value of this byte: the order stays
        size_t start = 0;
        for (size_t& count : counts)
            start += std::exchange(count, start);
        for (const T& item : items)
            scratch[counts[(key(item) >> shift) & 0xff]++] = item;
        items.swap(scratch);
    }
}

} // namespace repack
