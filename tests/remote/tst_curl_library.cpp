// libcurl is loaded when something is first read over HTTP (core/remote/curl_library.h): a
// process that reads local files only never maps it nor the libraries it needs, and a system
// without it gets an error naming the package, not a failure to start.
#include "core/remote/curl_library.h"
#include "tests/support/loaded_libraries.h"
#include "tests/support/result_checks.h"

#include <QTest>

#include <string>

using namespace repack;

using fixtures::isMapped;

class TestCurlLibrary : public QObject {
    Q_OBJECT

private slots:
    // First: nothing before has asked for libcurl.
    void libcurlIsMappedOnlyOnceAUrlIsRead()
    {
        QVERIFY(!isMapped("libcurl"));
        const auto curl = curlLibrary();
        QVERIFY_OK(curl);
        QVERIFY(isMapped("libcurl"));
        QVERIFY(!(*curl)->version.empty());
        QCOMPARE(curlLibrary().value(), curl.value()); // loaded once
    }

    void aMissingLibraryNamesThePackage()
    {
        const auto curl = loadCurlLibrary("libcurl-not-installed-here.so.4");
        QVERIFY_FAILS_WITH(curl, "libcurl-not-installed-here.so.4");
        QVERIFY_FAILS_WITH(curl, "apt-get install libcurl4");
        QCOMPARE(curl.error().kind, ErrorKind::Io);
    }

    void aLibraryThatIsNotLibcurlIsRefused()
    {
        QVERIFY_FAILS_WITH(loadCurlLibrary("libz.so.1"), "has no curl_version_info");
    }
};

QTEST_GUILESS_MAIN(TestCurlLibrary)
#include "tst_curl_library.moc"
