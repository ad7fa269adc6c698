// Test hook for the save protocol: when the environment variable ONNX_REPACK_CRASH_AT names a
// point, the process kills itself there with SIGKILL (no cleanup, no destructors), as a power
// cut or `kill -9` would. Tests use it to prove every intermediate state on disk is valid.
#pragma once

namespace repack {

// Points, in protocol order: "data-written", "models-written", "model-temp-committed",
// "data-swapped", "model-final-committed", "cleaned".
void crashPoint(const char* name);

} // namespace repack
