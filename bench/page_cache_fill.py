#!/usr/bin/python3
"""How fast this machine fills new page-cache pages: SIZE written into a new file in 16 MiB
pwrites from one resident buffer, no onnx_repack code (issue 37, bench/README.md).

    page_cache_fill.py [--size 1GiB] [--idle SECONDS] [--runs N]

Each run, after --idle seconds of sleep (memory freed before then may have gone back to a
virtual machine's host), writes the file three ways, printing the seconds of the writes and of
the final fsync: `plain` (pwrite only), `writeback` (as the core's DataWriter did before issue
37: sync_file_range of each 32 MiB, waiting for data 64 MiB behind) and `drop` (the same, the
pages waited for dropped with posix_fadvise DONTNEED, as it does now, so the next pages reuse
them). Writes into the work folder (/var/tmp), deletes its file after each run.
"""
import argparse
import ctypes
import os
import time

MIB = 1 << 20
CHUNK, LAG = 32 * MIB, 64 * MIB
WAIT_BEFORE, WRITE, WAIT_AFTER = 1, 2, 4

libc = ctypes.CDLL(None, use_errno=True)
libc.sync_file_range.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]


def fill(path, size, mode):
    block = os.urandom(16 * MIB)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        started = time.perf_counter()
        written = done = 0
        for at in range(0, size, len(block)):
            os.pwrite(fd, block, at)
            end = at + len(block)
            if mode == "plain" or end < written + CHUNK:
                continue
            libc.sync_file_range(fd, written, end - written, WRITE)
            written = end
            if end > done + LAG:
                libc.sync_file_range(fd, done, end - LAG - done, WAIT_BEFORE | WRITE | WAIT_AFTER)
                if mode == "drop":
                    os.posix_fadvise(fd, done, end - LAG - done, os.POSIX_FADV_DONTNEED)
                done = end - LAG
        writes = time.perf_counter() - started
        started = time.perf_counter()
        os.fsync(fd)
        return writes, time.perf_counter() - started
    finally:
        os.close(fd)
        os.unlink(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1GiB")
    parser.add_argument("--idle", type=float, default=5)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    units = {"MiB": MIB, "GiB": 1024 * MIB}
    size = next(int(args.size[:-3]) * f for u, f in units.items() if args.size.endswith(u))
    path = os.path.join("/var/tmp", f"page_cache_fill_{os.getpid()}.bin")
    for run in range(args.runs):
        for mode in ("plain", "writeback", "drop"):
            time.sleep(args.idle)
            writes, sync = fill(path, size, mode)
            print(f"run {run + 1} {mode:<9}  writes {writes:5.2f} s ({size / writes / 1e9:4.2f} GB/s)"
                  f"  fsync {sync:4.2f} s", flush=True)


if __name__ == "__main__":
    main()
