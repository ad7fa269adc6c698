// A plain-text table with columns sized to their widest cell, for terminal output. Cells are
// printed as printable() makes them (control characters escaped) and measured by displayWidth()
// (cli/terminal_text.h).
#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace repack::cli {

class TextTable {
public:
    // Row i's cells (0 <= i < count). Asked for twice, once to size the columns and once to
    // print, so a table of millions of rows holds one row at a time.
    using RowSource = std::function<std::vector<std::string>(size_t)>;

    explicit TextTable(std::vector<std::string> header)
        : m_header(std::move(header))
    {
    }
    TextTable(std::vector<std::string> header, size_t count, RowSource source)
        : m_header(std::move(header))
        , m_count(count)
        , m_source(std::move(source))
    {
    }
    // A row of a small table, kept until print().
    void addRow(std::vector<std::string> row) { m_rows.push_back(std::move(row)); }
    // Columns listed in `rightAligned` (numbers) are padded on the left.
    void print(std::ostream& out, const std::vector<size_t>& rightAligned = {}) const;

private:
    void forEachRow(const std::function<void(const std::vector<std::string>&)>& visit) const;

    std::vector<std::string> m_header;
    std::vector<std::vector<std::string>> m_rows;
    size_t m_count = 0;
    RowSource m_source;
};

} // namespace repack::cli
