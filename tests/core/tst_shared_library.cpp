// libcrypto is loaded the first time a checksum is made (core/shared_library.h, core/checksum.h):
// a command that makes none never maps it (issue 37: 1.4 MiB of every process), and a system
// without it gets an error naming the package where a checksum is needed, not a failure to start.
#include "core/checksum.h"
#include "core/inspect/verify.h"
#include "core/model/model.h"
#include "core/result.h"
#include "core/shared_library.h"
#include "tests/support/cli_run.h"
#include "tests/support/data_file_builder.h"
#include "tests/support/loaded_libraries.h"
#include "tests/support/model_builder.h"
#include "tests/support/result_checks.h"
#include "tests/support/tensor_builder.h"

#include <QTemporaryDir>
#include <QTest>

#include <onnx/onnx_pb.h>

#include <cstring>
#include <string>

using namespace repack;
using fixtures::isMapped;

class TestSharedLibrary : public QObject {
    Q_OBJECT

private slots:
    // First: nothing before has made a checksum. Verifying external tensors without a
    // checksum key reads them without one.
    void verifyWithoutChecksumsNeverLoadsLibcrypto()
    {
        QTemporaryDir dir;
        onnx::ModelProto model = fixtures::emptyModel();
        fixtures::DataFileBuilder data("data.bin");
        auto plain = fixtures::rawTensor("plain", onnx::TensorProto::FLOAT, {64});
        data.append(plain);
        *model.mutable_graph()->add_initializer() = plain;
        QVERIFY(data.save(dir.path()));
        QVERIFY(fixtures::saveModel(model, dir.filePath("m.onnx")));
        auto loaded = Model::load(dir.filePath("m.onnx").toStdString());
        QVERIFY_OK(loaded);
        QVERIFY((*loaded)->tensors().front().isExternal());
        QVERIFY(verify(**loaded, {}).empty());
        QVERIFY(!isMapped("libcrypto"));
    }

    void libcryptoIsMappedOnlyOnceAChecksumIsMade()
    {
        QVERIFY(!isMapped("libcrypto"));
        const std::string text = "abc";
        const auto digest = Sha1::of(std::as_bytes(std::span(text.data(), text.size())));
        QCOMPARE(digest, std::string("a9993e364706816aba3e25717850c26c9cd0d89d")); // FIPS 180
        QVERIFY(isMapped("libcrypto"));
        QVERIFY_OK(checksumsAvailable());
        Sha1 pieces; // the same digest, fed in two parts, through the library loaded once
        pieces.update(std::as_bytes(std::span(text.data(), 1)));
        pieces.update(std::as_bytes(std::span(text.data() + 1, 2)));
        QCOMPARE(pieces.hexDigest(), digest);
    }

    // Neither libcrypto nor libcurl (core/remote/curl_library.h) is loaded at start.
    void theCliStartsWithoutLibrariesLoadedOnFirstUse()
    {
        // The dynamic loader lists what the executable needs at start, and runs nothing.
        const auto run = fixtures::runCli({"--version"}, {{{"LD_TRACE_LOADED_OBJECTS", "1"}}});
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(run.out.contains("libc.so"), run.out.constData()); // the list was printed
        QVERIFY2(!run.out.contains("libcrypto"), run.out.constData());
        QVERIFY2(!run.out.contains("libcurl"), run.out.constData());
    }

    void aMissingLibraryNamesThePackage()
    {
        const auto library
            = openSharedLibrary("libcrypto-not-installed-here.so.3", "a SHA-1 checksum", "libssl3");
        QVERIFY_FAILS_WITH(library, "libcrypto-not-installed-here.so.3");
        QVERIFY_FAILS_WITH(library, "a SHA-1 checksum needs");
        QVERIFY_FAILS_WITH(library, "apt-get install libssl3");
        QCOMPARE(library.error().kind, ErrorKind::Io);
    }

    void aMissingSymbolIsFound()
    {
        const auto library = openSharedLibrary("libz.so.1", "a test", "zlib1g");
        QVERIFY_OK(library);
        int (*missing)() = nullptr;
        QVERIFY(!bindFunction(*library, "EVP_sha1", missing));
        const char* (*version)() = nullptr;
        QVERIFY(bindFunction(*library, "zlibVersion", version));
        QVERIFY(std::strlen(version()) > 0);
        closeSharedLibrary(*library);
    }

    // Where a library is needed by code with no error path (a digest's constructor), the
    // operation fails with the library's error instead of ending the process.
    void anUnavailableLibraryIsTheOperationsError()
    {
        const Status status = guardMemory("cannot verify m.onnx", []() -> Status {
            throw LibraryUnavailable(
                "a SHA-1 checksum needs libcrypto.so.3, which cannot be loaded");
        });
        QVERIFY_FAILS_WITH(status, "cannot verify m.onnx: a SHA-1 checksum needs libcrypto.so.3");
        QCOMPARE(status.error().kind, ErrorKind::Io);
    }
};

QTEST_GUILESS_MAIN(TestSharedLibrary)
#include "tst_shared_library.moc"
