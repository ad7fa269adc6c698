#include "cli/cli.h"

#include <csignal>

#include <malloc.h>

int main(int argc, char** argv)
{
    // Past a file size limit, writes should fail with EFBIG (and the save roll back) rather
    // than the process being killed by SIGXFSZ.
    std::signal(SIGXFSZ, SIG_IGN);
    // A fixed mmap threshold: blocks of 256 KiB and more are mapped and given back when freed.
    // glibc's default raises the threshold to the size of each mapped block freed (up to 32 MiB),
    // so one 24 MB index of names freed early left every later allocation of a 3,000,000-tensor
    // repack on the heap, kept, raising its peak (bench/index_at_scale.sh measures it).
    mallopt(M_MMAP_THRESHOLD, 256 << 10);
    return repack::cli::run(argc, argv);
}
