// onnx's own Python reader as an independent check of what a save left on disk: runs
// tests/save/tensor_values.py under $REPACK_PYTHON (Debian's /usr/bin/python3 with python3-onnx),
// which loads the model with onnx.load(path) and reports every tensor's values as a SHA-1.
#pragma once

#include <QMap>
#include <QString>

#include <map>
#include <string>

namespace fixtures {

using ValueHashes = QMap<QString, QString>; // tensor name -> SHA-1 hex of its values' bytes

struct PythonLoad {
    bool ok = false;
    QString error; // why onnx.load failed, or why the script could not run
    ValueHashes values;
};

// Empty when onnx.load(`modelPath`) succeeds, else what python printed.
QString onnxLoadFailure(const QString& modelPath);

// Loads `modelPath` with onnx.load through `script` (tensor_values.py).
PythonLoad loadInPython(const QString& script, const QString& modelPath);

// The hashes a reader must see for tensors holding `bytes` (name -> little-endian bytes).
ValueHashes hashesOf(const std::map<std::string, std::string>& bytes);

// Empty when `got` equals `expected`; otherwise the differences, one per line.
QString compareValues(const ValueHashes& got, const ValueHashes& expected);

// Runs `script` (tests/save/interop.py) over one "source<TAB>output<TAB>" line written to
// `dir`/interop.txt: empty when onnx.checker accepts `output` and onnx.load gives `source`'s
// values, else what it printed.
QString interopFailure(
    const QString& script, const QString& dir, const QString& source, const QString& output);

} // namespace fixtures

// For Qt Test suites: fails the test unless onnx.load(`path`) succeeds and every tensor's values
// equal `expected`; `context` (a QString) says which state of the test was checked.
#define QVERIFY_PYTHON_LOADS(script, path, expected, context)                                      \
    do {                                                                                           \
        const fixtures::PythonLoad python_ = fixtures::loadInPython(script, path);                 \
        QVERIFY2(python_.ok,                                                                       \
            qPrintable(QStringLiteral("%1: onnx.load fails: %2").arg(context, python_.error)));    \
        const QString diff_ = fixtures::compareValues(python_.values, expected);                   \
        QVERIFY2(diff_.isEmpty(),                                                                  \
            qPrintable(                                                                            \
                QStringLiteral("%1: python3-onnx reads other values:\n%2").arg(context, diff_)));  \
    } while (false)
