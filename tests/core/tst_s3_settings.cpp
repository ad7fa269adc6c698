// s3Settings and s3ObjectUrl (issue 38): endpoint, region and keys read as the AWS tools read
// them, and an object's address, the key encoded as it is signed.
#include "core/io/s3_settings.h"

#include "tests/support/map_environment.h"

#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <map>

using namespace repack;
using fixtures::mapEnvironment;

class TestS3Settings : public QObject {
    Q_OBJECT
private slots:
    void awsByDefault();
    void anEndpointIsAddressedPathStyle();
    void keysFromTheEnvironmentFirst();
    void keysFromTheCredentialsFile();
    void objectUrls();
};

void TestS3Settings::awsByDefault()
{
    const S3Settings s = s3Settings(mapEnvironment({{"HOME", "/nonexistent"}}));
    QCOMPARE(s.endpoint, std::string("https://s3.us-east-1.amazonaws.com"));
    QVERIFY(!s.custom);
    QCOMPARE(s.region, std::string("us-east-1"));
    QVERIFY(!s.signs());
    QCOMPARE(s3Settings(mapEnvironment({{"AWS_DEFAULT_REGION", "eu-west-3"}})).region,
        std::string("eu-west-3"));
    QCOMPARE(s3Settings(mapEnvironment(
                            {{"AWS_DEFAULT_REGION", "eu-west-3"}, {"AWS_REGION", "ap-south-1"}}))
                 .sigV4(),
        std::string("aws:amz:ap-south-1:s3"));
}

void TestS3Settings::anEndpointIsAddressedPathStyle()
{
    const S3Settings s = s3Settings(mapEnvironment({{"AWS_ENDPOINT_URL", "http://127.0.0.1:1/"},
        {"AWS_ENDPOINT_URL_S3", "http://127.0.0.1:4569/"}}));
    QVERIFY(s.custom);
    QCOMPARE(s.endpoint, std::string("http://127.0.0.1:4569"));
}

void TestS3Settings::keysFromTheEnvironmentFirst()
{
    const S3Settings s = s3Settings(mapEnvironment({{"AWS_ACCESS_KEY_ID", "AKID"},
        {"AWS_SECRET_ACCESS_KEY", "SECRET"}, {"AWS_SESSION_TOKEN", "TOKEN"}}));
    QVERIFY(s.signs());
    QCOMPARE(*s.accessKey, std::string("AKID"));
    QCOMPARE(*s.sessionToken, std::string("TOKEN"));
    // Half a key pair is none.
    QVERIFY(!s3Settings(mapEnvironment({{"AWS_ACCESS_KEY_ID", "AKID"}, {"HOME", "/nonexistent"}}))
                 .signs());
}

void TestS3Settings::keysFromTheCredentialsFile()
{
    QTemporaryDir dir;
    const std::string file = dir.filePath("credentials").toStdString();
    std::ofstream(file)
        << "# comment\n[default]\naws_access_key_id = DEF\naws_secret_access_key=DEFSECRET\n\n"
           "[work]\n aws_access_key_id = WORK \naws_secret_access_key = WORKSECRET\n"
           "aws_session_token = WT\n[half]\naws_access_key_id = H\n";
    const S3Settings byDefault
        = s3Settings(mapEnvironment({{"AWS_SHARED_CREDENTIALS_FILE", file}}));
    QVERIFY(byDefault.signs());
    QCOMPARE(*byDefault.accessKey, std::string("DEF"));
    QCOMPARE(*byDefault.secretKey, std::string("DEFSECRET"));
    QVERIFY(!byDefault.sessionToken);
    const S3Settings work = s3Settings(
        mapEnvironment({{"AWS_SHARED_CREDENTIALS_FILE", file}, {"AWS_PROFILE", "work"}}));
    QCOMPARE(*work.accessKey, std::string("WORK"));
    QCOMPARE(*work.sessionToken, std::string("WT"));
    QVERIFY(!s3Settings(
        mapEnvironment({{"AWS_SHARED_CREDENTIALS_FILE", file}, {"AWS_PROFILE", "half"}}))
                 .signs());
    std::filesystem::create_directories(dir.filePath("home/.aws").toStdString());
    std::filesystem::copy_file(file, dir.filePath("home/.aws/credentials").toStdString());
    QCOMPARE(*s3Settings(mapEnvironment({{"HOME", dir.filePath("home").toStdString()}})).accessKey,
        std::string("DEF"));
}

void TestS3Settings::objectUrls()
{
    S3Settings aws = s3Settings(mapEnvironment({{"AWS_REGION", "eu-west-1"}}));
    QCOMPARE(s3ObjectUrl(aws, *parseSource("s3://my-bucket/models/a b+c@d.onnx")),
        std::string("https://my-bucket.s3.eu-west-1.amazonaws.com/models/a%20b%2Bc%40d.onnx"));
    QCOMPARE(s3ObjectUrl(aws, *parseSource("s3://my.bucket/m.onnx")),
        std::string("https://s3.eu-west-1.amazonaws.com/my.bucket/m.onnx"));
    S3Settings local = s3Settings(mapEnvironment({{"AWS_ENDPOINT_URL", "http://127.0.0.1:4569"}}));
    QCOMPARE(s3ObjectUrl(local, *parseSource("s3://bucket/k.onnx")),
        std::string("http://127.0.0.1:4569/bucket/k.onnx"));
}

QTEST_APPLESS_MAIN(TestS3Settings)
#include "tst_s3_settings.moc"
