// Baseline for the adapter's async-allocation benchmark: the same three
// patterns straight on the CUDA runtime, timed the same way (host time of the
// enqueue loop, then one synchronisation outside the timed region).
//
//   nvcc -O2 -arch=sm_90 -o raw_async_alloc raw_async_alloc.cu -lcuda
//   ./raw_async_alloc [bytes] [iterations]
//
// Prints one `name value unit` line per figure, for scripts to compare.
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>

#define CHECK(call)                                                                  \
  do {                                                                               \
    cudaError_t err_ = (call);                                                       \
    if (err_ != cudaSuccess) {                                                       \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(err_));      \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

static double now_us() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char **argv) {
  const size_t bytes = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : (1u << 20);
  const int iters = argc > 2 ? std::atoi(argv[2]) : 100000;
  const int blocking_iters = iters / 50 > 0 ? iters / 50 : 1;

  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(nullptr));  // make the primary context
  cudaStream_t a, b;
  CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  cudaEvent_t ea, eb;
  CHECK(cudaEventCreateWithFlags(&ea, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&eb, cudaEventDisableTiming));
  void *p = nullptr;

  // Warm the default pool and the code paths.
  for (int i = 0; i < 1000; ++i) {
    CHECK(cudaMallocAsync(&p, bytes, a));
    CHECK(cudaFreeAsync(p, a));
  }
  CHECK(cudaStreamSynchronize(a));

  // 1. An allocation and a free on one stream.
  double t0 = now_us();
  for (int i = 0; i < iters; ++i) {
    CHECK(cudaMallocAsync(&p, bytes, a));
    CHECK(cudaFreeAsync(p, a));
  }
  double t1 = now_us();
  CHECK(cudaStreamSynchronize(a));
  std::printf("raw_async_pair_us %.3f\n", (t1 - t0) / iters);

  // 1b. The same from an explicitly named pool (what an adapter calls).
  cudaMemPool_t own_pool;
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  CHECK(cudaMemPoolCreate(&own_pool, &props));
  t0 = now_us();
  for (int i = 0; i < iters; ++i) {
    CHECK(cudaMallocFromPoolAsync(&p, bytes, own_pool, a));
    CHECK(cudaFreeAsync(p, a));
  }
  t1 = now_us();
  CHECK(cudaStreamSynchronize(a));
  std::printf("raw_pool_async_pair_us %.3f\n", (t1 - t0) / iters);
  CHECK(cudaMemPoolDestroy(own_pool));

  // 1c. What asking the driver for the current context costs.
  CUcontext current;
  t0 = now_us();
  for (int i = 0; i < 1000000; ++i) cuCtxGetCurrent(&current);
  t1 = now_us();
  std::printf("raw_ctx_get_current_ns %.1f\n", (t1 - t0) / 1000.0);

  // 2. Alternating streams: allocate and free on one, hand over with an
  //    event, allocate and free on the other, hand back.
  std::set<void *> seen;
  t0 = now_us();
  for (int i = 0; i < iters; ++i) {
    CHECK(cudaStreamWaitEvent(a, eb, 0));
    CHECK(cudaMallocAsync(&p, bytes, a));
    if (i < 1000) seen.insert(p);
    CHECK(cudaFreeAsync(p, a));
    CHECK(cudaEventRecord(ea, a));
    CHECK(cudaStreamWaitEvent(b, ea, 0));
    CHECK(cudaMallocAsync(&p, bytes, b));
    if (i < 1000) seen.insert(p);
    CHECK(cudaFreeAsync(p, b));
    CHECK(cudaEventRecord(eb, b));
  }
  t1 = now_us();
  CHECK(cudaDeviceSynchronize());
  std::printf("raw_two_stream_iter_us %.3f\n", (t1 - t0) / iters);
  std::printf("raw_two_stream_distinct_blocks %zu\n", seen.size());

  cudaMemPool_t pool;
  CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
  unsigned long long high = 0;
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &high));
  std::printf("raw_pool_reserved_high_bytes %llu\n", high);

  // 3. Blocking allocation and free.
  t0 = now_us();
  for (int i = 0; i < blocking_iters; ++i) {
    CHECK(cudaMalloc(&p, bytes));
    CHECK(cudaFree(p));
  }
  t1 = now_us();
  std::printf("raw_blocking_pair_us %.3f\n", (t1 - t0) / blocking_iters);

  CHECK(cudaEventDestroy(ea));
  CHECK(cudaEventDestroy(eb));
  CHECK(cudaStreamDestroy(a));
  CHECK(cudaStreamDestroy(b));
  return 0;
}
