// A terminal progress bar on stderr: bytes done and total, rate, ETA and the current tensor,
// redrawn at most ten times a second.
#pragma once

#include "core/progress.h"

#include <chrono>
#include <string>

namespace repack::cli {

class ProgressBar {
public:
    void update(const Progress& progress);
    void finish(); // ends the line

private:
    using Clock = std::chrono::steady_clock;
    Clock::time_point m_start = Clock::now();
    Clock::time_point m_lastDraw{};
    bool m_drawn = false;
};

// Ends the line a progress bar is drawing, if any, so that a message written next has a line
// of its own (the bar goes on below it).
void endProgressLine();

} // namespace repack::cli
