# shellcheck shell=bash
# shellcheck disable=SC2034  # thumbd_glibc_tunables is for the scripts that source this
# glibc's malloc settings for thumbd, for the scripts that start it (scripts/run.sh, bench/,
# deploy/cluster/run.sh): they source this file and start thumbd, and only thumbd, with
# GLIBC_TUNABLES="$thumbd_glibc_tunables" (not the floor, nginx or the load generators, which keep
# glibc's defaults). deploy/Dockerfile and deploy/thumbd.service set the same value (LaunchTests
# holds the three together). Why each: docs/architecture.md, "malloc".
#   arena_max=2                 image buffers freed on other threads do not spread over 16 arenas
#   mmap_threshold=1048576      fixed: libvips' larger buffers and decoded copies go back when freed
#   trim_threshold=8388608      8x it: heaps keep room for a few working buffers (glibc's 128 KiB
#                               with a fixed mmap threshold faults them in again on every decode)
#   hugetlb=1                   transparent huge pages for what malloc maps (THP mode madvise)
# A GLIBC_TUNABLES already in the environment wins, even empty (glibc's defaults).
thumbd_glibc_tunables="${GLIBC_TUNABLES-glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=1048576:glibc.malloc.trim_threshold=8388608:glibc.malloc.hugetlb=1}"
