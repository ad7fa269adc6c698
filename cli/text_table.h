// A plain-text table with columns sized to their widest cell, for terminal output. Cells are
// printed as printable() makes them (control characters escaped) and measured by displayWidth()
// (cli/terminal_text.h).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace repack::cli {

class TextTable {
public:
    explicit TextTable(std::vector<std::string> header)
        : m_rows{std::move(header)}
    {
    }
    void addRow(std::vector<std::string> row) { m_rows.push_back(std::move(row)); }
    // Columns listed in `rightAligned` (numbers) are padded on the left.
    void print(std::ostream& out, const std::vector<size_t>& rightAligned = {}) const;

private:
    std::vector<std::vector<std::string>> m_rows;
};

} // namespace repack::cli
