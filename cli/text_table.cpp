#include "text_table.h"

#include "cli/terminal_text.h"

#include <algorithm>
#include <ostream>

namespace repack::cli {

void TextTable::print(std::ostream& out, const std::vector<size_t>& rightAligned) const
{
    // Cells come from models: escaped so that no name can break a line, measured in columns
    // so that wide (CJK) names keep the columns aligned.
    std::vector<std::vector<std::string>> cells;
    std::vector<std::vector<size_t>> cellWidths;
    std::vector<size_t> widths;
    for (const auto& row : m_rows) {
        auto& safe = cells.emplace_back();
        auto& rowWidths = cellWidths.emplace_back();
        widths.resize(std::max(widths.size(), row.size()));
        for (size_t c = 0; c < row.size(); ++c) {
            safe.push_back(printable(row[c]));
            rowWidths.push_back(displayWidth(safe.back()));
            widths[c] = std::max(widths[c], rowWidths.back());
        }
    }
    for (size_t r = 0; r < cells.size(); ++r) {
        const auto& row = cells[r];
        std::string line;
        for (size_t c = 0; c < row.size(); ++c) {
            const size_t pad = widths[c] - cellWidths[r][c];
            const bool right
                = std::find(rightAligned.begin(), rightAligned.end(), c) != rightAligned.end();
            if (c)
                line += "  ";
            if (right)
                line.append(pad, ' ');
            line += row[c];
            if (!right && c + 1 < row.size())
                line.append(pad, ' ');
        }
        out << line << '\n';
    }
}

} // namespace repack::cli
