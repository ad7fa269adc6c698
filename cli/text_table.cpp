#include "text_table.h"

#include <algorithm>
#include <ostream>

namespace repack::cli {

void TextTable::print(std::ostream& out, const std::vector<size_t>& rightAligned) const
{
    std::vector<size_t> widths;
    for (const auto& row : m_rows) {
        widths.resize(std::max(widths.size(), row.size()));
        for (size_t c = 0; c < row.size(); ++c)
            widths[c] = std::max(widths[c], row[c].size());
    }
    for (const auto& row : m_rows) {
        std::string line;
        for (size_t c = 0; c < row.size(); ++c) {
            const size_t pad = widths[c] - row[c].size();
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
