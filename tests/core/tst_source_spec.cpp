// parseSource and siblingSource (issue 38): every form a model's place is given in, what each
// refuses, and where an external data file lies beside a remote model without leaving its
// repository, bucket or server root.
#include "core/io/source_spec.h"

#include <QTest>

using namespace repack;

Q_DECLARE_METATYPE(SourceSpec::Kind)

class TestSourceSpec : public QObject {
    Q_OBJECT
private slots:
    void parses_data();
    void parses();
    void refuses_data();
    void refuses();
    void folders();
    void displayHidesQueriesAndKeepsRevisions();
    void siblings_data();
    void siblings();
    void siblingsThatLeaveAreRefused_data();
    void siblingsThatLeaveAreRefused();
    void percentCoding();
};

void TestSourceSpec::parses_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<SourceSpec::Kind>("kind");
    // path or url, repo type, repo, revision, file, bucket: "|"-separated
    QTest::addColumn<QString>("fields");
    using K = SourceSpec::Kind;
    QTest::addRow("relative path") << "models/m.onnx" << K::Local << "models/m.onnx|||||";
    QTest::addRow("a path with a colon") << "a:b/m.onnx" << K::Local << "a:b/m.onnx|||||";
    QTest::addRow("file URL") << "file:///tmp/my%20model.onnx" << K::Local
                              << "/tmp/my model.onnx|||||";
    QTest::addRow("file URL, localhost")
        << "file://localhost/tmp/m.onnx" << K::Local << "/tmp/m.onnx|||||";
    QTest::addRow("https") << "https://example.test:8443/dir/m.onnx?X-Sig=abc" << K::Http
                           << "https://example.test:8443/dir/m.onnx?X-Sig=abc|||||";
    QTest::addRow("http, scheme in capitals")
        << "HTTP://127.0.0.1/m.onnx" << K::Http << "http://127.0.0.1/m.onnx|||||";
    QTest::addRow("http, fragment dropped")
        << "http://h/m.onnx#part" << K::Http << "http://h/m.onnx|||||";
    QTest::addRow("hf") << "hf://onnx-community/whisper-tiny/onnx/encoder_model.onnx" << K::Hub
                        << "|model|onnx-community/whisper-tiny|main|onnx/encoder_model.onnx|";
    QTest::addRow("hf, revision") << "hf://org/repo@v1.0/m.onnx" << K::Hub
                                  << "|model|org/repo|v1.0|m.onnx|";
    QTest::addRow("hf, PR revision")
        << "hf://org/repo@refs%2Fpr%2F3/m.onnx" << K::Hub << "|model|org/repo|refs/pr/3|m.onnx|";
    QTest::addRow("hf, dataset") << "hf://datasets/org/data@0123/x/m.onnx" << K::Hub
                                 << "|dataset|org/data|0123|x/m.onnx|";
    QTest::addRow("Hub resolve link")
        << "https://huggingface.co/org/repo/resolve/main/onnx/model%20q4.onnx?download=true"
        << K::Hub << "|model|org/repo|main|onnx/model q4.onnx|";
    QTest::addRow("Hub blob link, PR")
        << "https://huggingface.co/org/repo/blob/refs%2Fpr%2F1/m.onnx" << K::Hub
        << "|model|org/repo|refs/pr/1|m.onnx|";
    QTest::addRow("Hub tree link")
        << "https://hf.co/spaces/org/app/tree/main/onnx" << K::Hub << "|space|org/app|main|onnx/|";
    QTest::addRow("s3") << "s3://my-bucket/models/m.onnx" << K::S3 << "||||models/m.onnx|my-bucket";
}

void TestSourceSpec::parses()
{
    QFETCH(QString, text);
    QFETCH(SourceSpec::Kind, kind);
    QFETCH(QString, fields);
    auto spec = parseSource(text.toStdString());
    QVERIFY2(spec, spec ? "" : spec.error().message.c_str());
    QCOMPARE(spec->kind, kind);
    const QStringList f = fields.split('|');
    QCOMPARE(QString::fromStdString(kind == SourceSpec::Kind::Http ? spec->url : spec->path), f[0]);
    QCOMPARE(QString::fromStdString(spec->repoType), f[1]);
    QCOMPARE(QString::fromStdString(spec->repo), f[2]);
    QCOMPARE(QString::fromStdString(spec->revision), f[3]);
    QCOMPARE(QString::fromStdString(spec->file), f[4]);
    QCOMPARE(QString::fromStdString(spec->bucket), f[5]);
}

void TestSourceSpec::refuses_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("says");
    QTest::addRow("empty") << ""
                           << "no model given";
    QTest::addRow("unknown scheme") << "ftp://h/m.onnx"
                                    << "unknown scheme 'ftp'";
    QTest::addRow("credentials in a URL") << "https://user:secret@h/m.onnx"
                                          << "credentials";
    QTest::addRow("no host") << "https:///m.onnx"
                             << "without a host";
    QTest::addRow("dot-dot in a URL") << "http://h/a/%2E%2E/m.onnx"
                                      << "plain path";
    QTest::addRow("bad escape") << "http://h/m%zz.onnx"
                                << "two hex digits";
    QTest::addRow("hf without org") << "hf://gpt2"
                                    << "ORG/REPO";
    QTest::addRow("hf, bad repo") << "hf://org/re po/m.onnx"
                                  << "not a Hub repository";
    QTest::addRow("hf, double dash") << "hf://org/a--b/m.onnx"
                                     << "not a Hub repository";
    QTest::addRow("hf, dot-dot path") << "hf://org/repo/../other/m.onnx"
                                      << "plain path";
    QTest::addRow("hf, empty revision") << "hf://org/repo@/m.onnx"
                                        << "empty revision";
    QTest::addRow("Hub link, not a file") << "https://huggingface.co/org/repo/discussions/1"
                                          << "not a link to a Hub file";
    QTest::addRow("s3, bad bucket") << "s3://My_Bucket/m.onnx"
                                    << "not an S3 bucket";
    QTest::addRow("s3, backslash") << "s3://bucket/a\\b.onnx"
                                   << "backslash";
    QTest::addRow("file, relative") << "file://m.onnx"
                                    << "absolute path";
}

void TestSourceSpec::refuses()
{
    QFETCH(QString, text);
    QFETCH(QString, says);
    auto spec = parseSource(text.toStdString());
    QVERIFY(!spec);
    QVERIFY(spec.error().is(ErrorKind::Usage));
    QVERIFY2(spec.error().message.find(says.toStdString()) != std::string::npos,
        spec.error().message.c_str());
    QVERIFY2(
        spec.error().message.find("secret") == std::string::npos, "an error repeats a password");
}

void TestSourceSpec::folders()
{
    QVERIFY(parseSource("hf://org/repo/onnx/")->isFolder());
    QVERIFY(parseSource("hf://org/repo")->isFolder());
    QVERIFY(!parseSource("hf://org/repo/onnx/m.onnx")->isFolder());
    QVERIFY(parseSource("s3://bucket/models/")->isFolder());
    QVERIFY(parseSource("http://h/models/?list")->isFolder());
    QVERIFY(!parseSource("http://h/models/m.onnx")->isFolder());
    QVERIFY(!parseSource("models/")->isFolder()); // local: the file system says
}

void TestSourceSpec::displayHidesQueriesAndKeepsRevisions()
{
    QCOMPARE(parseSource("https://h/m.onnx?X-Amz-Signature=abc")->display(),
        std::string("https://h/m.onnx"));
    QCOMPARE(parseSource("hf://org/repo@refs%2Fpr%2F3/m.onnx")->display(),
        std::string("hf://org/repo@refs%2Fpr%2F3/m.onnx"));
    QCOMPARE(parseSource("https://huggingface.co/datasets/o/d/resolve/main/m.onnx")->display(),
        std::string("hf://datasets/o/d/m.onnx"));
    QCOMPARE(parseSource("s3://bucket/k.onnx")->display(), std::string("s3://bucket/k.onnx"));
    // Parsing what display() gives names the same source.
    for (const char* text : {"hf://org/repo@v2/a/m.onnx", "hf://spaces/o/s/m.onnx", "s3://b-1/x",
             "https://h:1/a%20b/m.onnx"})
        QCOMPARE(*parseSource(parseSource(text)->display()), *parseSource(text));
}

void TestSourceSpec::siblings_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("location");
    QTest::addColumn<QString>("sibling"); // display()
    QTest::addRow("local") << "dir/m.onnx"
                           << "m.onnx.data"
                           << "dir/m.onnx.data";
    QTest::addRow("local, bare name") << "m.onnx"
                                      << "w.bin"
                                      << "w.bin";
    QTest::addRow("http") << "http://h/a/m.onnx?sig=1"
                          << "m.onnx_data"
                          << "http://h/a/m.onnx_data";
    QTest::addRow("http, encoded") << "http://h/a%20b/m.onnx"
                                   << "w 1#.bin"
                                   << "http://h/a%20b/w%201%23.bin";
    QTest::addRow("http, RFC 3986 path characters kept") << "http://h/a/m.onnx"
                                                         << "w@2:x+y=z,(1)!$&';.bin"
                                                         << "http://h/a/w@2:x+y=z,(1)!$&';.bin";
    QTest::addRow("http, up inside") << "http://h/a/b/m.onnx"
                                     << "../w.bin"
                                     << "http://h/a/w.bin";
    QTest::addRow("hf") << "hf://org/repo@v1/onnx/m.onnx"
                        << "m.onnx_data"
                        << "hf://org/repo@v1/onnx/m.onnx_data";
    QTest::addRow("hf, sub folder") << "hf://org/repo/m.onnx"
                                    << "./weights/w.bin"
                                    << "hf://org/repo/weights/w.bin";
    QTest::addRow("s3") << "s3://bucket/models/m.onnx"
                        << "w.bin"
                        << "s3://bucket/models/w.bin";
}

void TestSourceSpec::siblings()
{
    QFETCH(QString, model);
    QFETCH(QString, location);
    QFETCH(QString, sibling);
    auto spec = parseSource(model.toStdString());
    QVERIFY(spec);
    auto data = siblingSource(*spec, location.toStdString());
    QVERIFY2(data, data ? "" : data.error().message.c_str());
    QCOMPARE(QString::fromStdString(data->display()), sibling);
    QCOMPARE(data->kind, spec->kind);
}

void TestSourceSpec::siblingsThatLeaveAreRefused_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("location");
    QTest::addColumn<QString>("says");
    QTest::addRow("hf, out of the repository") << "hf://org/repo/onnx/m.onnx"
                                               << "../../x.bin"
                                               << "leaves the repository";
    QTest::addRow("s3, out of the bucket") << "s3://bucket/m.onnx"
                                           << "../other/x"
                                           << "leaves the bucket";
    QTest::addRow("http, above the root") << "http://h/m.onnx"
                                          << "../x"
                                          << "leaves the server";
    QTest::addRow("absolute") << "hf://org/repo/m.onnx"
                              << "/etc/passwd"
                              << "not relative";
    QTest::addRow("a URL") << "http://h/m.onnx"
                           << "http://evil.test/x"
                           << "not relative";
    QTest::addRow("backslash") << "s3://bucket/m.onnx"
                               << "..\\x"
                               << "backslash";
    QTest::addRow("empty") << "hf://org/repo/m.onnx"
                           << ""
                           << "is empty";
}

void TestSourceSpec::siblingsThatLeaveAreRefused()
{
    QFETCH(QString, model);
    QFETCH(QString, location);
    QFETCH(QString, says);
    auto spec = parseSource(model.toStdString());
    QVERIFY(spec);
    auto data = siblingSource(*spec, location.toStdString());
    QVERIFY(!data);
    QVERIFY(data.error().is(ErrorKind::Corrupt));
    QVERIFY2(data.error().message.find(says.toStdString()) != std::string::npos,
        data.error().message.c_str());
    QVERIFY2(data.error().message.starts_with(spec->display()), data.error().message.c_str());
}

void TestSourceSpec::percentCoding()
{
    std::string every;
    for (int c = 0; c < 256; ++c)
        every += static_cast<char>(c);
    const std::string encoded = percentEncode(every);
    QCOMPARE(*percentDecode(encoded), every);
    QVERIFY(encoded.find(' ') == std::string::npos);
    QCOMPARE(percentEncode("a/b c", false), std::string("a%2Fb%20c"));
    QVERIFY(!percentDecode("%4"));
    QVERIFY(!percentDecode("%"));
    QCOMPARE(*percentDecode("%41%2f"), std::string("A/"));
}

QTEST_APPLESS_MAIN(TestSourceSpec)
#include "tst_source_spec.moc"
