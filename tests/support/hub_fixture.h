// A scripted Hugging Face Hub on 127.0.0.1 (a FaultServer), shared by the suites that read
// hf:// names (tests/remote/tst_hub_model, tests/ui/tst_open_url): one repository, org/repo at
// kHubCommit (branch "main"), its files answered by the resolve and tree APIs the Hub has; a file
// kept in LFS is redirected to its CDN, the same server called "localhost" (another origin);
// org/old is its former name (a relative 307); any other repository is not found.
#pragma once

#include "core/io/hub_cache.h"
#include "tests/support/fault_server.h"

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace fixtures {

inline const std::string kHubCommit = "0123456789abcdef0123456789abcdef01234567";
inline const std::string kHubToken = "hf_secretTokenForTests";

// m/model.onnx (served by the Hub itself) with inline weights, and m/w.bin beside it holding two
// of its tensors (kept in LFS: the Hub redirects it to its CDN).
std::map<std::string, std::string> hubRepositoryFiles();
// An export as Optimum writes it: onnx/ holding three graphs, each with its data file beside it
// (kept in LFS), their weights of sizes no other graph's has (so a folder report compares none),
// and a README above the folder.
std::map<std::string, std::string> optimumFiles();
// Adds onnx/decoder_model.onnx and onnx/decoder_with_past_model.onnx to `files`, holding the
// same weights, each in its own data file (as Optimum's decoder and decoder-with-past do).
void addSharedDecoders(std::map<std::string, std::string>& files);
// The .onnx_data files among `files`.
std::set<std::string> dataFilesOf(const std::map<std::string, std::string>& files);
// The files of the repository written to `dir` (the local twin of the Hub's files); the path of
// m/model.onnx there.
std::filesystem::path writeLocally(
    const std::map<std::string, std::string>& files, const std::filesystem::path& dir);
// Every file under `dir` (relative path -> bytes): what a save wrote there.
std::map<std::string, std::string> filesUnder(const std::filesystem::path& dir);

struct HubFixture {
    std::map<std::string, std::string> files = hubRepositoryFiles();
    std::set<std::string> lfs = {"m/w.bin"};
    bool gated = false; // every resolve answers 401 (a gated repository)
    std::string listingNext; // the second page's address, when not the Hub's own
    size_t pageSize = 2; // entries of a listing's page
    bool branchMoved = false; // the listing at "main" is of another commit than its resolves
    // A file whose every answer at the CDN after its first has another ETag (a new version of
    // it served under the same commit); empty: none.
    std::string changesAfterFirstRead;
    std::map<std::string, int> cdnAnswers; // by path
    // Each resolve of a file in LFS signs its CDN address anew (?Signature=sN), and a signature
    // is good for this many answers at the CDN, then answered 403 as an expired one; 0: for ever.
    int signatureUses = 0;
    // Under every signature after a file's first, the CDN serves another version of it (another
    // ETag): the file changed while its address was given again.
    bool resignedIsNewVersion = false;
    // A file's first signed address is on the Hub's own host (which answers /cdn/ too), the
    // later ones on the CDN's.
    bool firstSignedAtHub = false;
    // Every signature after a file's first is refused at once (403): the address given again
    // cannot even be stated.
    bool resignedRefused = false;
    // When set, the resolve of a file in LFS redirects to this Location, spelled as a hostile
    // Hub would (with its commit, ETag and size), instead of to the CDN.
    std::string lfsLocation;
    std::map<std::string, int> resolves; // of files in LFS, by path
    std::map<std::string, int> signatureAnswers; // at the CDN, by signature
    std::map<std::string, std::string> firstSignature; // by path
    int signatures = 0;
    // While set, every request at the CDN (a data file's bytes) is never answered (until the
    // client hangs up or the server stops); `cdnStalls` counts them.
    std::atomic<bool> stallCdn{false};
    std::atomic<int> cdnStalls{0};
    // A push to "main", made by setting `pushed` (after `removedByPush`) between two reads:
    // "main" is then at kPushedCommit, which holds every file but those removed; kHubCommit
    // still holds them all. Kept before `server`, whose thread reads them.
    static inline const std::string kPushedCommit = "89abcdef0123456789abcdef0123456789abcdef";
    std::set<std::string> removedByPush;
    std::atomic<bool> pushed{false};
    // While set, every request at the CDN is answered 503 with Retry-After: 30 (a client waits
    // to ask again); `cdnBusyAnswers` counts them.
    std::atomic<bool> busyCdn{false};
    std::atomic<int> cdnBusyAnswers{0};
    FaultServer server{[this](int socket, const FaultRequest& r, int) { answer(socket, r); }};

    std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(server.port()); }
    std::string cdn() const { return "http://localhost:" + std::to_string(server.port()); }
    repack::HubSettings settings(const std::filesystem::path& cache, bool withToken = true) const;
    static bool atCdn(const FaultRequest& r);

    // The bytes of `content`: the whole (HEAD) or the range asked (GET).
    static void serve(int socket, const FaultRequest& r, const std::string& content,
        std::vector<std::string> headers);
    // The tree of a folder (recursive, its subfolders listed as folders too), `pageSize`
    // entries a page, each further page the one the Link header names (&cursor=N). A file in
    // LFS lists its sha256, the X-Linked-Etag of its resolve; another its git blob id, the ETag.
    void list(int socket, const FaultRequest& r, const std::string& folder);
    std::string gitOid(const std::string& path) const;
    static std::string lfsOid(const std::string& path) { return "sha-" + path; }
    void answer(int socket, const FaultRequest& r);
    // Whether `path` is absent from what `r` asks for: a file the push removed, asked at "main"
    // or at kPushedCommit.
    bool goneAt(const FaultRequest& r, const std::string& path) const;
    // Answers a listing or a resolve at "main" or kPushedCommit once pushed; false for any other
    // request (answer() answers it).
    bool answerPushed(int socket, const FaultRequest& r);
};

} // namespace fixtures
