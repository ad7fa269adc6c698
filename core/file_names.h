// Every file name the tool makes or recognises, made and parsed in one place (as leveldb's
// db/filename.h): the default data file beside a model, shards and chunks, the temporaries of a
// save, names that look like external data, and the check of a data file name a user gives.
#pragma once

#include "result.h"

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace repack {

// The data file named after a model saved at `modelPath`: "<model file name><suffix>"
// ("model.onnx" + ".data", a target's "_data", ".safetensors").
std::string dataFileFor(const std::filesystem::path& modelPath, std::string_view suffix);
// The default data file name for a model saved at `modelPath`: "<file name>.data".
std::string defaultDataFile(const std::filesystem::path& modelPath);

// The name of shard `index` (from 0) of `count` for data file `dataFile`; the plain name for a
// single file. The names onnx_ir gives since 1.1, so both tools write and find the same files:
// "-NNNNN-of-NNNNN" (1-based, five digits or more) goes before the file name's extension chain,
// the trailing ".ext" parts that start with a letter: "model.onnx.data" ->
// "model-00001-of-00003.onnx.data", "qwen2.5.onnx.data" -> "qwen2.5-00001-of-00003.onnx.data",
// "w.bin" -> "w-00001-of-00003.bin", "weights" -> "weights-00001-of-00003". A dot in a folder
// name never moves the shards into another folder ("v1.2/weights-00001-of-00002"). The names
// of earlier versions ("model.onnx-00001-of-00003.data") are still read, and recognised as
// data files by isDataName.
std::string shardName(const std::string& dataFile, size_t index, size_t count);

// transformers.js chunk `index` (from 0) of `dataFile`: the plain name, then "<name>_1",
// "<name>_2", ... ("model.onnx_data", "model.onnx_data_1").
std::string chunkName(const std::string& dataFile, size_t index);

// Temporaries are named "<final name>.repack-tmp-<12 hex digits>", beside their final file (same
// folder, so rename and link are atomic). The name never starts with '.': onnx's Python loader
// strips leading dots from locations, so a model that names a temporary during a save would not
// load there.
inline constexpr std::string_view kTempMarker = ".repack-tmp-";
// A fresh, unused name for a temporary hard link or rename in `finalPath`'s folder.
std::filesystem::path tempNameFor(const std::filesystem::path& finalPath);

// True for names made by createTempFor/tempNameFor (and the ".<name>.repack-tmp-<hex>" names of
// earlier versions, so their leftovers are recognised too).
bool isTempName(const std::string& fileName);
// The final file name a temporary name stands for ("" when `fileName` is not one).
std::string finalNameOfTemp(const std::string& fileName);

// Names ONNX tools give external data files (*.data, *_data, *.bin, shards, ...), never a
// temporary: what the folder scan calls an unused data file.
bool isDataName(std::string name);

// What a name in a model's folder is, as leveldb's ParseFileName tells its files apart: one
// classifier for the folder scan, clean and the GUI alike.
enum class FileType {
    Model, // "*.onnx", in any case ("Model.ONNX" from Windows too), never a temporary
    Data, // isDataName: a name ONNX tools give external data files
    Temp, // a save's temporary (isTempName); finalNameOfTemp says of what
    Other,
};
FileType classifyFileName(const std::string& fileName);
inline bool isModelName(const std::string& fileName)
{
    return classifyFileName(fileName) == FileType::Model;
}

// A data file name a user gives (--data, a pin, the GUI): relative, inside the model's folder,
// a file and not a folder, no backslash or empty component, not a temporary's name. The error
// says which.
Status checkDataFileName(const std::string& name);

} // namespace repack
