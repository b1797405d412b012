// Raw CUDA baseline for ur_bench scenario 5: replays the exact sequence of
// allocations and frees that ur_bench runs (written by
// `ur_bench --mixed-trace DIR`, one file per live budget) on cudaMallocAsync
// and cudaFreeAsync, one stream, on the device's default memory pool with
// its release threshold at its maximum, and reports the pool's reserved
// high water over its used high water, as ur_bench reports ours.
//
//   nvcc -O2 -arch=sm_90 -o mixed_replay mixed_replay.cu
//   ./mixed_replay DIR/mixed-8MiB.txt DIR/mixed-64MiB.txt ...
//
// Trace lines: `# comment`, `a ID SIZE` (allocate SIZE bytes as block ID,
// IDs count from 0), `f ID` (free block ID). Prints one `name value` line
// per figure: for each file (its name without `.txt`) the reserved and used
// high water in bytes, the largest sum of live request sizes, and the ratio
// reserved/used after 2000, 20000 and 200000 allocations and at the end.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                  \
  do {                                                                               \
    cudaError_t err_ = (call);                                                       \
    if (err_ != cudaSuccess) {                                                       \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(err_));      \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

static uint64_t attr(cudaMemPool_t pool, cudaMemPoolAttr which) {
  uint64_t v = 0;
  CHECK(cudaMemPoolGetAttribute(pool, which, &v));
  return v;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s TRACE...\n", argv[0]);
    return 2;
  }
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(nullptr));  // make the primary context
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaMemPool_t pool;
  CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
  uint64_t keep = UINT64_MAX;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));

  for (int f = 1; f < argc; ++f) {
    FILE *in = std::fopen(argv[f], "r");
    if (!in) {
      std::perror(argv[f]);
      return 1;
    }
    std::string name = argv[f];
    size_t slash = name.find_last_of('/');
    if (slash != std::string::npos) name = name.substr(slash + 1);
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".txt") == 0) name.resize(name.size() - 4);

    // A fresh start: nothing reserved, marks at zero.
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemPoolTrimTo(pool, 0));
    uint64_t zero = 0;
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &zero));
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));

    std::vector<void *> blocks;
    std::vector<size_t> sizes;
    size_t live = 0, live_high = 0, allocs = 0;
    char line[256];
    while (std::fgets(line, sizeof line, in)) {
      char op = 0;
      unsigned long long id = 0, size = 0;
      if (line[0] == '#' || line[0] == '\n') continue;
      int n = std::sscanf(line, "%c %llu %llu", &op, &id, &size);
      if (op == 'a' && n == 3) {
        if (blocks.size() <= id) {
          blocks.resize(id + 1, nullptr);
          sizes.resize(id + 1, 0);
        }
        CHECK(cudaMallocAsync(&blocks[id], size, s));
        sizes[id] = size;
        live += size;
        if (live > live_high) live_high = live;
        ++allocs;
        if (allocs == 2000 || allocs == 20000 || allocs == 200000) {
          double r = (double)attr(pool, cudaMemPoolAttrReservedMemHigh) / (double)attr(pool, cudaMemPoolAttrUsedMemHigh);
          std::printf("raw_%s_ratio_after_%zu %.3f\n", name.c_str(), allocs, r);
        }
      } else if (op == 'f' && n >= 2 && id < blocks.size() && blocks[id]) {
        CHECK(cudaFreeAsync(blocks[id], s));
        blocks[id] = nullptr;
        live -= sizes[id];
      } else {
        std::fprintf(stderr, "%s: bad line: %s", argv[f], line);
        return 1;
      }
    }
    std::fclose(in);
    CHECK(cudaStreamSynchronize(s));
    uint64_t reserved = attr(pool, cudaMemPoolAttrReservedMemHigh);
    uint64_t used = attr(pool, cudaMemPoolAttrUsedMemHigh);
    std::printf("raw_%s_allocations %zu\n", name.c_str(), allocs);
    std::printf("raw_%s_reserved_high %llu\n", name.c_str(), (unsigned long long)reserved);
    std::printf("raw_%s_used_high %llu\n", name.c_str(), (unsigned long long)used);
    std::printf("raw_%s_live_request_high %zu\n", name.c_str(), live_high);
    std::printf("raw_%s_ratio %.3f\n", name.c_str(), (double)reserved / (double)used);
    std::printf("raw_%s_ratio_to_requests %.3f\n", name.c_str(), (double)reserved / (double)live_high);
  }
  CHECK(cudaStreamDestroy(s));
  return 0;
}
