// An external data file assembled in memory: tensors placed at chosen offsets (gaps zero-filled
// or filled with junk, overlaps allowed), then written out once.
#pragma once

#include <onnx/onnx_pb.h>

#include <QString>

#include <cstdint>
#include <string>

namespace fixtures {

class DataFileBuilder {
public:
    // `location` is what the tensors' external_data says, relative to the model's folder.
    explicit DataFileBuilder(std::string location)
        : m_location(std::move(location))
    {
    }

    const std::string& location() const { return m_location; }
    uint64_t size() const { return m_bytes.size(); }
    const std::string& bytes() const { return m_bytes; }

    // Writes `bytes` at `offset`, growing the file with zeros as needed.
    void place(uint64_t offset, const std::string& bytes);
    // Appends `count` bytes of `fill` (junk: 0xEE by default) at the end.
    void appendFill(uint64_t count, char fill = '\xEE');

    // Moves `tensor`'s raw_data to `offset` and points the tensor there (offset and length keys).
    void externalize(onnx::TensorProto& tensor, uint64_t offset);
    // The same, at the current end of the file rounded up to `alignment`.
    uint64_t append(onnx::TensorProto& tensor, uint64_t alignment = 1);

    // Writes the file as `dir`/location. Returns false on I/O failure.
    bool save(const QString& dir) const;

private:
    std::string m_location;
    std::string m_bytes;
};

// Writes the model `dir`/`modelName` with two uint8 tensors "a" and "b" of `bytes` bytes each in
// the data file w.bin, at 0 and at 64 KiB: the gap between them is what a 64 KiB alignment asks
// for and, counted against a smaller one, mostly orphaned. `junk`: the gap holds 0xEE bytes, not
// zeros. The model's path, or empty on I/O failure.
QString writeTensorsAtZeroAnd64KiB(
    const QString& dir, const QString& modelName, int64_t bytes, bool junk = false);

} // namespace fixtures
