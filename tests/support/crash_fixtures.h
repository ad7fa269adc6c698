// Fixtures and on-disk observations for the crash-consistency and interop suites: a small
// model that onnx's checker accepts (every tensor place: initializers, a typed-field tensor, a
// Constant attribute, If-branch initializers) with distinct random bytes per tensor, written
// inline or with dense external data by the fixture itself (never by the tool under test).
#pragma once

#include <onnx/onnx_pb.h>

#include <QString>
#include <QStringList>

#include <cstdint>
#include <map>
#include <string>

namespace repack {
class Model;
}

namespace fixtures {

// `n` bytes from a seeded splitmix64 stream: no period, so bytes read from a wrong offset or
// from another tensor never match by accident.
std::string noiseBytes(uint64_t n, uint64_t seed);

struct WeightedModel {
    onnx::ModelProto proto;
    std::map<std::string, std::string> bytes; // tensor name -> its little-endian bytes
};

// Initializers of 40 B to 1.3 MiB (two above the 1 MiB align threshold, one in float_data),
// a Constant of 2800 B and If branches with 1600 B initializers. Tensor names are unique.
WeightedModel weightedModel();

// Writes `proto` as `dir`/`modelName` with every raw tensor of at least `threshold` bytes
// (anywhere in the model) moved, densely and in visiting order, into `dir`/`dataName`.
bool saveWithExternalData(onnx::ModelProto proto, const QString& dir, const QString& modelName,
    const std::string& dataName, uint64_t threshold = 1024);

// Where one tensor's bytes live.
struct StoredAt {
    bool external = false;
    std::string location;
    uint64_t offset = 0;
    uint64_t length = 0;
    bool operator==(const StoredAt&) const = default;
};
using Layout = std::map<std::string, StoredAt>; // by tensor name

Layout layoutOf(const repack::Model& model);
std::string describe(const StoredAt& at);

// Empty when every tensor of `model` reads back exactly `expected` (by name, same set of
// names); otherwise the first differences, one per line.
std::string compareBytes(
    const repack::Model& model, const std::map<std::string, std::string>& expected);

// Files named "<name>.repack-tmp-<hex>" (or the older ".<name>.repack-tmp-<hex>") anywhere under
// `dir`, relative to it.
QStringList tempLeftovers(const QString& dir);

} // namespace fixtures
