#include "text_table.h"
#include "terminal_text.h"

#include <algorithm>
#include <ostream>

namespace repack::cli {

void TextTable::forEachRow(const std::function<void(const std::vector<std::string>&)>& visit) const
{
    visit(m_header);
    for (const auto& row : m_rows)
        visit(row);
    for (size_t i = 0; i < m_count; ++i)
        visit(m_source(i));
}

void TextTable::print(std::ostream& out, const std::vector<size_t>& rightAligned) const
{
    // Cells come from models: escaped so that no name can break a line, measured in columns
    // so that wide (CJK) names keep the columns aligned.
    std::vector<size_t> widths;
    forEachRow([&](const std::vector<std::string>& row) {
        widths.resize(std::max(widths.size(), row.size()));
        for (size_t c = 0; c < row.size(); ++c)
            widths[c] = std::max(widths[c], displayWidth(printable(row[c])));
    });
    std::string line;
    forEachRow([&](const std::vector<std::string>& row) {
        line.clear();
        for (size_t c = 0; c < row.size(); ++c) {
            const std::string cell = printable(row[c]);
            const size_t pad = widths[c] - displayWidth(cell);
            const bool right
                = std::find(rightAligned.begin(), rightAligned.end(), c) != rightAligned.end();
            if (c)
                line += "  ";
            if (right)
                line.append(pad, ' ');
            line += cell;
            if (!right && c + 1 < row.size())
                line.append(pad, ' ');
        }
        out << line << '\n';
    });
}

} // namespace repack::cli
