// An S3 server on 127.0.0.1 for the s3:// suites: npm's @20minutes/s3rver (installed for the
// tests by scripts/install-test-s3rver.sh, found through $REPACK_S3RVER_MODULES and run by
// $REPACK_NODE), which checks AWS Signature Version 4 with its one key pair S3RVER/S3RVER. One
// bucket, its objects in a temporary folder; the port is the system's pick.
#pragma once

#include <QProcess>
#include <QString>
#include <QTemporaryDir>

#include <filesystem>
#include <string>

namespace fixtures {

class S3rverFixture {
public:
    static constexpr const char* kAccessKey = "S3RVER";
    static constexpr const char* kSecretKey = "S3RVER";

    S3rverFixture();
    ~S3rverFixture();
    S3rverFixture(const S3rverFixture&) = delete;
    S3rverFixture& operator=(const S3rverFixture&) = delete;

    // "" when node and the server are installed, else what is missing (a suite QSKIPs with it).
    static QString unavailable();
    // Starts the server with `bucket` made and waits until it listens: "" then, else why not.
    QString start(const std::string& bucket);
    void stop();

    // Uploads `file` as `key` of the bucket (an unsigned PUT, which the server takes):
    // "" when it is there, else why not.
    QString put(const std::string& key, const std::filesystem::path& file) const;
    std::string endpoint() const; // http://127.0.0.1:PORT

private:
    QTemporaryDir m_dir;
    QProcess m_process;
    std::string m_bucket;
    quint16 m_port = 0;
};

} // namespace fixtures
