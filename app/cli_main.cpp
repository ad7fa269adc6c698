#include "cli/cli.h"

int main(int argc, char** argv)
{
    return repack::cli::run(argc, argv);
}
