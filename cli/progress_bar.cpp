#include "progress_bar.h"
#include "terminal_text.h"

#include "core/format.h"

#include <atomic>
#include <cstdio>

namespace repack::cli {
namespace {

// Whether a bar's line on stderr awaits its end (any bar's: one command draws one at a time).
std::atomic<bool> g_lineOpen{false};

} // namespace

void ProgressBar::update(const Progress& progress)
{
    const auto now = Clock::now();
    const bool done = progress.bytesDone >= progress.bytesTotal;
    if (!done && m_drawn && now - m_lastDraw < std::chrono::milliseconds(100))
        return;
    m_lastDraw = now;
    m_drawn = true;
    const double fraction
        = progress.bytesTotal ? static_cast<double>(progress.bytesDone) / progress.bytesTotal : 1.0;
    const double seconds = std::chrono::duration<double>(now - m_start).count();
    const double rate = seconds > 0 ? progress.bytesDone / seconds : 0;
    const double eta = rate > 0 ? (progress.bytesTotal - progress.bytesDone) / rate : 0;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(fraction * kWidth);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.append(static_cast<size_t>(kWidth - filled), '.');
    // A save of phases says which one fills the bar (a folder's: comparing, then writing).
    const std::string tensor = fitWidth(progress.phase.empty()
            ? std::string(progress.tensor)
            : std::string(progress.phase) + ": " + std::string(progress.tensor),
        32);
    std::fprintf(stderr, "\r[%s] %3.0f%%  %s / %s  %s/s  ETA %.0f s  %s", bar.c_str(),
        fraction * 100, formatBytes(progress.bytesDone).c_str(),
        formatBytes(progress.bytesTotal).c_str(), formatBytes(static_cast<uint64_t>(rate)).c_str(),
        eta, tensor.c_str());
    std::fflush(stderr);
    g_lineOpen = true;
}

void ProgressBar::finish()
{
    endProgressLine();
    m_drawn = false;
}

void endProgressLine()
{
    if (g_lineOpen.exchange(false))
        std::fputc('\n', stderr);
}

} // namespace repack::cli
