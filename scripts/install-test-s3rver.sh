#!/usr/bin/env bash
# Installs an S3 server for the tests of s3:// models (tests/remote/tst_s3_model.cpp) into
# build/s3rver: npm's @20minutes/s3rver, a maintained fork of s3rver that checks AWS Signature
# Version 4 (s3rver 3.7.1, the last release of jamhall/s3rver, accepts any V4 signature: a wrong
# secret would pass). Only for tests; nothing of it is built into the product. Without npm or
# the registry the S3 tests are skipped and say so.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/install-npm-for-tests.sh" s3rver @20minutes/s3rver 4.0.4 \
  "the S3 tests are skipped"
