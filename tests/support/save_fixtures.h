// Fixtures for the save suites: small on-disk models of distinct uint8 tensors, sparse models
// past the 2 GiB protobuf limit (no real 2 GiB written), and before/after snapshots of folders.
#pragma once

#include "core/model/model.h"

#include <QByteArray>
#include <QMap>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fixtures {

// Name of tensor `i` in the models below: "t0", "t1", ...
std::string tensorName(size_t i);
// The bytes of tensor `i` of `bytes` bytes: a pattern seeded by `i`, so no two tensors match.
std::string tensorContent(size_t i, uint64_t bytes);

// Writes `dir`/`modelName`: uint8 tensors t0.. of `sizes` bytes. Those of at least
// `externalFrom` bytes live in `dir`/`dataName` in reverse declaration order with 7 junk bytes
// (0xEE) before each, so any save must really move them; the others are raw_data.
// Returns the model path.
QString writeUint8Model(const QString& dir, const QString& modelName,
    const std::vector<uint64_t>& sizes, uint64_t externalFrom, const std::string& dataName);

// Writes `dir`/`modelName` with `count` uint8 tensors of `bytesEach` bytes, all external in
// one sparse `dir`/`dataName` (ftruncate: reads as zeros, takes no disk space).
QString writeSparseModel(const QString& dir, const QString& modelName, size_t count,
    uint64_t bytesEach, const std::string& dataName);

// Loads `path`; null (with a warning naming the error) when it fails.
std::unique_ptr<repack::Model> loadModel(const QString& path);

// Every tensor's bytes read through `model`, by qualified name; "<error: ...>" when unreadable.
std::map<std::string, std::string> readAllTensors(const repack::Model& model);

QByteArray fileContents(const QString& path);
// SHA-1 of every regular file (hidden ones too) in `dir`, by file name; symlinks as "-> target".
QMap<QString, QByteArray> hashFolder(const QString& dir);
// Each regular file in `dir` as "name inode N mtime S.NS": equal lists before and after a
// save mean it wrote no file (a rewrite with the same bytes gives a new inode or mtime).
QStringList fileStamps(const QString& dir);
// Names in `dir` that look like a save's temporaries: "<name>.repack-tmp-<12 hex>", and the
// ".<name>.repack-tmp-<hex>" form of earlier versions.
QStringList saveTempsIn(const QString& dir);

} // namespace fixtures
