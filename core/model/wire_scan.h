// A protobuf wire-format scanner over a whole .onnx file: it finds every TensorProto's raw_data
// payload wherever the tensor index looks (initializers, sparse initializers, node attributes,
// subgraphs at any depth, functions) and produces the "skeleton": the same bytes with those
// payloads emptied (the field kept, with length 0) and every enclosing length recomputed.
// Parsing the skeleton gives the model minus the payloads; putting each payload back into its
// TensorProto gives exactly what parsing the file would have given. Everything else (unknown
// fields, typed data, field order) is copied through untouched.
#pragma once

#include "core/result.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace onnx {
class ModelProto;
class TensorProto;
} // namespace onnx

namespace repack {

// One step from a message to a child message: its field number and, for repeated fields, the
// position among that field's elements (0 for singular fields, which protobuf merges).
struct WireStep {
    uint32_t field = 0;
    uint32_t index = 0;
    auto operator<=>(const WireStep&) const = default;
};

// One raw_data field of a TensorProto, in file order: each one stripped, and each one kept
// that follows a stripped one of the same tensor (it replaces that). Payloads of tensors with
// none stripped are not listed: a model of millions of tiny tensors lists none.
struct RawPayload {
    // From the ModelProto to the TensorProto, in the skeleton (initializers and nodes left out
    // of it are not counted).
    std::vector<WireStep> path;
    uint64_t offset = 0; // of the payload bytes in the file
    uint64_t length = 0;
    // Emptied in the skeleton; false for payloads below the scan's minimum, which stay.
    // A tensor's raw_data is its LAST payload (protobuf keeps the last of a repeated singular
    // field and merges repeated occurrences of a singular message), stripped or not.
    bool stripped = false;
};

// Elements of one repeated field of the main graph (its initializers or its nodes) left out of
// a skeleton (scanModel's `elide`), each kept as its serialized bytes: a model of millions of
// tiny tensors or Constant nodes that a save leaves as they are is parsed without them (a parsed
// TensorProto costs ~300 bytes, a NodeProto with its attribute and tensor ~1 KB, their bytes
// often 12 and 40) and written with them put back where they were (spliceModel).
class ElidedList {
public:
    // `ownTensors`: each entry holds its own range of tensors (nodes); otherwise an entry is the
    // tensor at its position (initializers), and costs 8 bytes, not 16.
    explicit ElidedList(bool ownTensors = false)
        : m_ownTensors(ownTensors)
    {
    }
    bool empty() const { return m_entries.empty(); }
    size_t size() const { return m_entries.size(); }
    // The position of entry `i` among the field's elements of the merged main graph, ascending.
    uint64_t position(size_t i) const { return m_entries[i].position; }
    // The tensors of entry `i` by tensor index (Model::tensors()): [firstTensor, + tensorCount).
    // An initializer is its own tensor (the index lists the main graph's initializers first);
    // a node holds those of its attributes, subgraphs included, possibly none.
    uint64_t firstTensor(size_t i) const
    {
        return m_ownTensors ? m_tensors[i].first : m_entries[i].position;
    }
    uint64_t tensorCount(size_t i) const { return m_ownTensors ? m_tensors[i].count : 1; }
    std::span<const std::byte> bytes(size_t i) const
    {
        const uint64_t end = i + 1 < m_entries.size() ? m_entries[i + 1].offset : m_bytes.size();
        return std::as_bytes(std::span(m_bytes))
            .subspan(m_entries[i].offset, static_cast<size_t>(end - m_entries[i].offset));
    }
    // At most what they take written back as fields (tags and lengths included).
    size_t writtenBytes() const { return m_bytes.size() + 11 * m_entries.size(); }
    // The entry holding tensor `tensor`, or nullopt when no entry does.
    std::optional<size_t> findTensor(uint64_t tensor) const;
    void add(uint64_t position, uint64_t firstTensor, uint64_t tensors,
        std::span<const std::byte> bytes);
    void clear();

    // Built in two steps, so that each part is allocated once at its size: the entries with
    // their lengths (false past 4 GiB in all: not added), then all bytes in that order.
    void reserve(size_t entries)
    {
        m_entries.reserve(entries);
        if (m_ownTensors)
            m_tensors.reserve(entries);
    }
    bool note(uint64_t position, uint64_t firstTensor, uint64_t tensors, uint64_t length);
    uint64_t notedBytes() const { return m_noted; }
    void setBytes(std::string bytes) { m_bytes = std::move(bytes); }

private:
    struct Entry {
        uint32_t position;
        uint32_t offset; // in m_bytes; the entry ends where the next starts
    };
    struct Tensors {
        uint32_t first;
        uint32_t count;
    };
    bool m_ownTensors;
    std::string m_bytes;
    std::vector<Entry> m_entries;
    std::vector<Tensors> m_tensors; // per entry, when m_ownTensors
    uint64_t m_noted = 0;
};

// The main graph's initializers and nodes left out of a skeleton. Every initializer entry's
// tensor comes before every node entry's tensors in the index.
struct ElidedElements {
    ElidedList initializers;
    ElidedList nodes{true};

    bool empty() const { return initializers.empty() && nodes.empty(); }
    size_t size() const { return initializers.size() + nodes.size(); }
    // Tensors of all entries.
    uint64_t tensorCount() const;
    size_t writtenBytes() const { return initializers.writtenBytes() + nodes.writtenBytes(); }
    void clear()
    {
        initializers.clear();
        nodes.clear();
    }
};

// Which elements of the main graph a scan may leave out: an initializer or a node whose every
// tensor `select` selects (by tensor index; a node without tensors always), that has no payload
// stripped, and that is not the first of its field (the place the others go back after).
// `nodes` false leaves only initializers out.
struct ElideRule {
    std::function<bool(uint64_t tensor)> select;
    bool nodes = true;
};

struct WireScan {
    bool changed = false; // false: nothing was stripped, the file is its own skeleton
    std::string skeleton; // empty unless `changed`
    std::vector<RawPayload> payloads; // as RawPayload says: not every payload
    ElidedElements elided; // not in the skeleton (then `changed`)
};

// Scans the serialized ModelProto `file`. Payloads of at least `minStrippedBytes` are emptied
// in the skeleton, and the main graph elements `elide` selects are left out of it. A truncated
// varint, a length past the end of its message, a wire type that cannot be skipped or nesting
// deeper than protobuf allows is an error naming `fileName` and the byte offset; nothing outside
// `file` is ever read.
Result<WireScan> scanModel(std::span<const std::byte> file, const std::string& fileName,
    uint64_t minStrippedBytes = 0, const ElideRule& elide = {});

// What a raw_data payload becomes: `length` bytes, supplied by the caller as payload `id`
// (a zero length empties it).
struct PayloadReplacement {
    uint64_t length = 0;
    size_t id = 0;
};
// Decides, for each raw_data payload, whether it is replaced (nullopt keeps it).
using PayloadRule
    = std::function<std::optional<PayloadReplacement>(std::span<const std::byte> payload)>;

// Where a replacing payload goes: before byte `at` of SplicedModel::bytes.
struct PayloadInsert {
    uint64_t at = 0;
    size_t id = 0;
};

// A serialized model with payloads replaced: `bytes` holds everything but the replacing
// payloads (every enclosing length already counts them), `inserts` says where each goes in
// order, `size` is the length of the whole result.
struct SplicedModel {
    std::string bytes;
    std::vector<PayloadInsert> inserts;
    uint64_t size = 0;
};

// Rewrites the serialized ModelProto `serialized` with the payloads `rule` replaces: how a
// model is written with payloads that stay in their files (core/save/model_writer.h). The
// `elided` elements (when given) go back among the main graph's initializers and nodes of
// `serialized`, each at its position, verbatim; `serialized` must hold the main graph once, as
// protobuf writes it. Errors as scanModel's.
Result<SplicedModel> spliceModel(std::span<const std::byte> serialized, const std::string& fileName,
    const PayloadRule& rule, const ElidedElements* elided = nullptr);

// The TensorProto that `path` leads to in a parsed model, or null when there is none.
onnx::TensorProto* tensorAt(onnx::ModelProto& model, const std::vector<WireStep>& path);

} // namespace repack
