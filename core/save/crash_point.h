// Test hooks for the save protocol.
// - Crash points: when the environment variable ONNX_REPACK_CRASH_AT names a point, the process
//   kills itself there with SIGKILL (no cleanup, no destructors), as a power cut or `kill -9`
//   would. Tests use it to prove every intermediate state on disk is valid for every reader.
// - Fault points: when ONNX_REPACK_FAIL_AT (a comma-separated list) names a point, the system
//   call at that point fails as if the file system had refused it, so tests can prove what a
//   failure there leaves behind. Read on every call, so a test may set it in-process.
#pragma once

namespace repack {

// Points, in protocol order: "locked", "data-written", "models-written",
// "model-temp-committed", "data-swapped", "model-final-committed", "cleaned".
void crashPoint(const char* name);

// Fault points: "fsync-dir" (every directory sync after the commit point; before it a sync
// failure is an ordinary error), "rename-model-temp" (the commit),
// "link-data" (EPERM: a file system without hard links), "rename-data", "rename-model-final",
// "unlink-temp", "unlink-unused", "lease" (no read lease granted: a source is only watched by
// its stamp, core/save/source_watch.h). True when the caller must fail as the real call would.
bool failPoint(const char* name);

} // namespace repack
