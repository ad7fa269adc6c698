// The bytes of one tensor, or of any range a ByteSource reads: a view into memory someone else
// keeps (a mapping of a file, the model's own raw_data, a lender's buffer) or owned bytes.
#pragma once

#include "core/result.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace repack {

class ByteSource;
class DataFile; // core/model/data_file.h
struct TensorInfo; // core/model/tensor_info.h

// The bytes of one tensor, little-endian as in raw_data. Views into a mapping of a data file or
// of the .onnx, or the model's own raw_data; typed-field tensors are converted into `owned`.
// Bytes mapped from a file fault (SIGBUS) if the file shrinks underneath: touch them inside
// readMapped (core/mapped_memory.h) with where() as its label.
class TensorBytes {
public:
    // A view into the mapping of `file`, valid while the file lives; without a file, into memory
    // the model owns (its raw_data). Defined with DataFile (core/model/data_file.cpp).
    static TensorBytes view(std::span<const std::byte> bytes, const DataFile* file = nullptr);
    // A view into the memory of `source` (a mapping of a file: it may fault as above), which
    // every copy keeps alive: valid after the source's last other owner let go of it.
    static TensorBytes mapped(
        std::span<const std::byte> bytes, std::shared_ptr<const ByteSource> source);
    // Bytes someone else owns, valid for as long as `keep` (held by every copy) lives: a
    // payload lent by a detached model's PayloadLender.
    static TensorBytes lent(std::span<const std::byte> bytes, std::shared_ptr<const void> keep)
    {
        TensorBytes t;
        t.m_view = bytes;
        t.m_keep = std::move(keep);
        return t;
    }
    static TensorBytes own(std::vector<std::byte> bytes)
    {
        TensorBytes t;
        t.m_owned = std::move(bytes);
        return t;
    }
    std::span<const std::byte> bytes() const
    {
        return m_owned.empty() ? m_view : std::span<const std::byte>(m_owned);
    }
    // Gives the pages of a mapped view back to the system (they stay in the page cache), after
    // a pass over bytes not needed again soon: reading many tensors keeps memory flat. Owned
    // bytes are left alone.
    // Only [from, from + length) of the bytes, for a pass that goes chunk by chunk.
    void releasePages(size_t from = 0, size_t length = SIZE_MAX) const
    {
        if (m_source && from < m_view.size())
            releaseSourcePages(m_view.subspan(from, std::min(length, m_view.size() - from)));
    }
    // Copies the bytes into `into`, which must be as long, inside readMapped (a mapping whose
    // file shrank is an error naming `what`, not a crash).
    Status copyTo(std::span<std::byte> into, const std::string& what) const;
    // Lent bytes (lent()): memory of their owner, resident, never a mapping of a file.
    bool isLent() const { return m_keep != nullptr && m_source == nullptr; }
    // "<tensor> (in <file>)" for a mapped view, else the tensor's name: what an error says.
    // Defined with DataFile (core/model/data_file.cpp).
    std::string where(const TensorInfo& tensor) const;

private:
    void releaseSourcePages(std::span<const std::byte> part) const;

    std::span<const std::byte> m_view;
    const ByteSource* m_source = nullptr; // the source whose mapping m_view lies in, if any
    std::shared_ptr<const void> m_keep; // what keeps a lent or mapped() m_view alive
    std::vector<std::byte> m_owned;
};

} // namespace repack
