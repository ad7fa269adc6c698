// Checks on the core's Result and Status values, shared by the suites: a failure names what the
// error said, and an expected failure is checked for what it says, not only that it failed.
#pragma once

#include <QTest>

#include <string>

namespace fixtures {

// Whether a failed `result`'s message contains `part`; "" when it succeeded.
template <typename R> bool failsWith(const R& result, const std::string& part)
{
    return !result.ok() && result.error().message.find(part) != std::string::npos;
}

// What a QVERIFY_FAILS_WITH failure prints: the message, or that it succeeded.
template <typename R> std::string failureText(const R& result)
{
    return result.ok() ? std::string("it succeeded") : result.error().message;
}

} // namespace fixtures

// Passes when `expr` (a Result or a Status) holds a value; else fails with the error's message.
#define QVERIFY_OK(expr)                                                                           \
    do {                                                                                           \
        const auto& result_ = (expr);                                                              \
        QVERIFY2(result_.ok(), result_.ok() ? "" : result_.error().message.c_str());               \
    } while (false)

// Passes when `expr` failed with a message that contains `part`; else fails with what it said.
#define QVERIFY_FAILS_WITH(expr, part)                                                             \
    do {                                                                                           \
        const auto& result_ = (expr);                                                              \
        QVERIFY2(::fixtures::failsWith(result_, part),                                             \
            (std::string("expected an error containing \"") + (part)                               \
                + "\", got: " + ::fixtures::failureText(result_))                                  \
                .c_str());                                                                         \
    } while (false)
