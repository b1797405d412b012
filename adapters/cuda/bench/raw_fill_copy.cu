// The driver's own floor for ur_bench scenario 2 on one GPU: a 1 KiB
// cuMemsetD8Async and a device-to-device cuMemcpyAsync per iteration with one
// synchronisation per batch, against the blocking pattern scenario 2 takes
// as its baseline (cuMemAlloc, memset, copy, synchronise, cuMemFree). No
// allocator is involved in the first loop, so its ratio bounds what any
// adapter can reach in scenario 2 on this machine.
#include <cuda.h>
#include <stdio.h>
#include <time.h>

#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { printf("%s failed: %d\n", #x, (int)r_); return 1; } } while (0)

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(void) {
  CUdevice dev;
  CUcontext ctx;
  CUstream s;
  CUdeviceptr src, dst;
  const size_t bytes = 1024;
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&dev, 0));
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CHECK(cuMemAlloc(&src, bytes));
  CHECK(cuMemAlloc(&dst, bytes));
  for (int rep = 0; rep < 3; ++rep) {
    const int n = 5000, m = 2000;
    double t0 = now_ns();
    for (int i = 0; i < n; ++i) {
      CHECK(cuMemsetD8Async(src, 0xa5, bytes, s));
      CHECK(cuMemcpyDtoDAsync(dst, src, bytes, s));
    }
    CHECK(cuStreamSynchronize(s));
    double t1 = now_ns();
    // The same with the unified-addressing copy the adapter issues
    // (cuMemcpyAsync), which the driver resolves from the pointers.
    for (int i = 0; i < n; ++i) {
      CHECK(cuMemsetD8Async(src, 0xa5, bytes, s));
      CHECK(cuMemcpyAsync(dst, src, bytes, s));
    }
    CHECK(cuStreamSynchronize(s));
    double t1u = now_ns();
    for (int i = 0; i < m; ++i) {
      CUdeviceptr mem;
      CHECK(cuMemAlloc(&mem, bytes));
      CHECK(cuMemsetD8Async(mem, 0xa5, bytes, s));
      CHECK(cuMemcpyDtoDAsync(dst, mem, bytes, s));
      CHECK(cuStreamSynchronize(s));
      CHECK(cuMemFree(mem));
    }
    double t2 = now_ns();
    double async_us = (t1 - t0) / n / 1e3, unified_us = (t1u - t1) / n / 1e3, blocking_us = (t2 - t1u) / m / 1e3;
    printf("raw_fill_copy_async_us %.3f raw_fill_copy_unified_async_us %.3f raw_fill_copy_blocking_us %.3f ratio %.2f\n",
           async_us, unified_us, blocking_us, blocking_us / async_us);
  }
  return 0;
}
