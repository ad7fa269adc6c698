#include "save_fixtures.h"

#include "data_file_builder.h"
#include "model_builder.h"
#include "tensor_builder.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QtDebug>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fixtures {

std::string tensorName(size_t i)
{
    return "t" + std::to_string(i);
}

std::string tensorContent(size_t i, uint64_t bytes)
{
    return patternBytes(bytes, static_cast<uint8_t>(i * 37 + 11));
}

QString writeUint8Model(const QString& dir, const QString& modelName,
    const std::vector<uint64_t>& sizes, uint64_t externalFrom, const std::string& dataName)
{
    onnx::ModelProto model = emptyModel();
    auto* graph = model.mutable_graph();
    for (size_t i = 0; i < sizes.size(); ++i)
        *graph->add_initializer()
            = rawTensor(tensorName(i), 2, {int64_t(sizes[i])}, tensorContent(i, sizes[i]));
    DataFileBuilder data(dataName);
    bool anyExternal = false;
    for (size_t k = sizes.size(); k-- > 0;) {
        if (sizes[k] < externalFrom)
            continue;
        data.appendFill(7);
        data.append(*graph->mutable_initializer(int(k)));
        anyExternal = true;
    }
    if (anyExternal && !data.save(dir))
        return {};
    const QString path = QDir(dir).filePath(modelName);
    return saveModel(model, path) ? path : QString();
}

QString writeSparseModel(const QString& dir, const QString& modelName, size_t count,
    uint64_t bytesEach, const std::string& dataName)
{
    onnx::ModelProto model = emptyModel();
    for (size_t i = 0; i < count; ++i) {
        onnx::TensorProto t;
        t.set_name(tensorName(i));
        t.set_data_type(2);
        t.add_dims(int64_t(bytesEach));
        setExternal(t, dataName, std::to_string(i * bytesEach), std::to_string(bytesEach));
        *model.mutable_graph()->add_initializer() = std::move(t);
    }
    const QString dataPath = QDir(dir).filePath(QString::fromStdString(dataName));
    const int fd
        = ::open(QFile::encodeName(dataPath).constData(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0)
        return {};
    const bool sized = ::ftruncate(fd, off_t(count * bytesEach)) == 0;
    ::close(fd);
    const QString path = QDir(dir).filePath(modelName);
    return sized && saveModel(model, path) ? path : QString();
}

std::unique_ptr<repack::Model> loadModel(const QString& path)
{
    auto model = repack::Model::load(path.toStdString());
    if (!model) {
        qWarning().noquote() << "cannot load" << path << ":"
                             << QString::fromStdString(model.error().message);
        return nullptr;
    }
    return std::move(*model);
}

std::map<std::string, std::string> readAllTensors(const repack::Model& model)
{
    std::map<std::string, std::string> out;
    for (size_t i = 0; i < model.tensors().size(); ++i) {
        auto bytes = model.read(i);
        const std::string name = model.tensors()[i].qualifiedName();
        if (!bytes) {
            out[name] = "<error: " + bytes.error().message + ">";
            continue;
        }
        const auto view = bytes->bytes();
        out[name] = std::string(reinterpret_cast<const char*>(view.data()), view.size());
    }
    return out;
}

QByteArray fileContents(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

QMap<QString, QByteArray> hashFolder(const QString& dir)
{
    QMap<QString, QByteArray> out;
    const auto entries = QDir(dir).entryInfoList(QDir::Files | QDir::Hidden | QDir::System);
    for (const QFileInfo& info : entries) {
        if (info.isSymLink()) {
            out[info.fileName()] = "-> " + QFile::encodeName(info.symLinkTarget());
            continue;
        }
        QFile file(info.filePath());
        QCryptographicHash hash(QCryptographicHash::Sha1);
        if (file.open(QIODevice::ReadOnly) && hash.addData(&file))
            out[info.fileName()] = hash.result().toHex();
        else
            out[info.fileName()] = "<unreadable>";
    }
    return out;
}

QStringList fileStamps(const QString& dir)
{
    QStringList out;
    for (const QString& name : QDir(dir).entryList(QDir::Files | QDir::Hidden)) {
        struct stat st { };
        if (::stat(QFile::encodeName(QDir(dir).filePath(name)).constData(), &st) != 0) {
            out << name + QStringLiteral(" cannot be stated");
            continue;
        }
        out << QStringLiteral("%1 inode %2 mtime %3.%4")
                   .arg(name)
                   .arg(st.st_ino)
                   .arg(st.st_mtim.tv_sec)
                   .arg(st.st_mtim.tv_nsec);
    }
    return out;
}

QStringList saveTempsIn(const QString& dir)
{
    QStringList out;
    const auto names = QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::System);
    for (const QString& name : names)
        if (name.contains(QStringLiteral(".repack-tmp-")))
            out << name;
    return out;
}

} // namespace fixtures
