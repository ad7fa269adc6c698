#include "data_file_builder.h"

#include "model_builder.h"
#include "tensor_builder.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

namespace fixtures {

void DataFileBuilder::place(uint64_t offset, const std::string& bytes)
{
    if (m_bytes.size() < offset + bytes.size())
        m_bytes.resize(offset + bytes.size(), '\0');
    m_bytes.replace(offset, bytes.size(), bytes);
}

void DataFileBuilder::appendFill(uint64_t count, char fill)
{
    m_bytes.append(count, fill);
}

void DataFileBuilder::externalize(onnx::TensorProto& tensor, uint64_t offset)
{
    const std::string bytes = tensor.raw_data();
    place(offset, bytes);
    tensor.clear_raw_data();
    setExternal(tensor, m_location, std::to_string(offset), std::to_string(bytes.size()));
}

uint64_t DataFileBuilder::append(onnx::TensorProto& tensor, uint64_t alignment)
{
    const uint64_t offset = (size() + alignment - 1) / alignment * alignment;
    externalize(tensor, offset);
    return offset;
}

bool DataFileBuilder::save(const QString& dir) const
{
    const QString path = QDir(dir).filePath(QString::fromStdString(m_location));
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    const auto written = file.write(m_bytes.data(), static_cast<qint64>(m_bytes.size()));
    return written == static_cast<qint64>(m_bytes.size());
}

QString writeTensorsAtZeroAnd64KiB(
    const QString& dir, const QString& modelName, int64_t bytes, bool junk)
{
    DataFileBuilder data("w.bin");
    onnx::ModelProto proto = emptyModel();
    auto a = rawTensor("a", 2, {bytes});
    data.externalize(a, 0);
    if (junk)
        data.appendFill(65536 - data.size());
    auto b = rawTensor("b", 2, {bytes});
    data.externalize(b, 65536);
    *proto.mutable_graph()->add_initializer() = a;
    *proto.mutable_graph()->add_initializer() = b;
    const QString path = QDir(dir).filePath(modelName);
    return data.save(dir) && saveModel(proto, path) ? path : QString();
}

} // namespace fixtures
