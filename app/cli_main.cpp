#include "cli/cli.h"

#include <csignal>

int main(int argc, char** argv)
{
    // Past a file size limit, writes should fail with EFBIG (and the save roll back) rather
    // than the process being killed by SIGXFSZ.
    std::signal(SIGXFSZ, SIG_IGN);
    return repack::cli::run(argc, argv);
}
