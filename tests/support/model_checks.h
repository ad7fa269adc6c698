// Checks on a model for the suites of remote models: its first error, and whether it holds the
// same tensors' bytes as its local copy.
#pragma once

#include "core/io/tensor_bytes.h"
#include "core/model/model.h"

#include <QTest>

#include <string>

namespace fixtures {

// The model's first error-severity problem, for a failure's message ("" when none).
inline std::string firstError(const repack::Model& model)
{
    for (const repack::Problem& p : model.problems())
        if (p.severity == repack::Severity::Error)
            return p.message;
    return {};
}

// Every tensor of `remote` reads as the same bytes as its namesake at the same position of
// `local`. A failure names the tensor; callers check QTest::currentTestFailed() after it.
inline void compareTensorBytes(repack::Model& remote, repack::Model& local)
{
    QCOMPARE(remote.tensors().size(), local.tensors().size());
    const auto text = [](const repack::TensorBytes& bytes) {
        return std::string(
            reinterpret_cast<const char*>(bytes.bytes().data()), bytes.bytes().size());
    };
    for (size_t i = 0; i < local.tensors().size(); ++i) {
        auto r = remote.read(i);
        auto l = local.read(i);
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        QVERIFY2(l, l ? "" : l.error().message.c_str());
        QVERIFY2(text(*r) == text(*l), local.tensors()[i].qualifiedName().c_str());
    }
}

} // namespace fixtures
