/*
 * The async-allocation benchmark through Unified Runtime: the patterns of
 * raw_async_alloc.cu, on the first CUDA device the loader reports, through
 * our loader and CUDA adapter. Run both in one go (bench/run.sh) to read the
 * figures side by side.
 *
 *   gcc -O2 -I include adapters/cuda/bench/ur_async_alloc.c \
 *       -L target/release -l:libur_loader.so.0 -ldl -o ur_async_alloc
 *   ./ur_async_alloc [bytes] [iterations]
 *
 * Pools measured: the device's default pool (CUDA's own default pool), a
 * pool made with UR_USM_POOL_FLAG_USE_NATIVE_MEMORY_POOL_EXP (a new native
 * pool) and a pool made without it (served by the shared engine). Prints one
 * `name value unit` line per figure.
 *
 * The native pool's pair is also timed beside the driver's own calls in the
 * same process, on the same stream (the queue's native handle): libcuda is
 * opened with dlopen, so no CUDA header or library is needed to build.
 */
#include <ur_api.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                          \
  do {                                                                       \
    ur_result_t check_result_ = (call);                                      \
    if (check_result_ != UR_RESULT_SUCCESS) {                                \
      fprintf(stderr, "ur_async_alloc: %s failed with %d (line %d)\n",      \
              #call, (int)check_result_, __LINE__);                          \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static ur_context_handle_t context;
static ur_device_handle_t device;
static ur_queue_handle_t qa, qb;
static size_t bytes;
static int iters;

static size_t pool_stat(ur_usm_pool_handle_t pool, ur_usm_pool_info_t what) {
  size_t v = 0;
  CHECK(urUSMPoolGetInfoExp(pool, what, &v, NULL));
  return v;
}

/* An allocation and a free on one in-order queue, no events. */
static double async_pair(ur_usm_pool_handle_t pool,
                         ur_result_t (*alloc)(ur_queue_handle_t, ur_usm_pool_handle_t, size_t,
                                              const ur_exp_async_usm_alloc_properties_t *, uint32_t,
                                              const ur_event_handle_t *, void **, ur_event_handle_t *),
                         int n) {
  void *p;
  for (int i = 0; i < 1000; ++i) {
    CHECK(alloc(qa, pool, bytes, NULL, 0, NULL, &p, NULL));
    CHECK(urEnqueueUSMFreeExp(qa, pool, p, 0, NULL, NULL));
  }
  CHECK(urQueueFinish(qa));
  double t0 = now_us();
  for (int i = 0; i < n; ++i) {
    CHECK(alloc(qa, pool, bytes, NULL, 0, NULL, &p, NULL));
    CHECK(urEnqueueUSMFreeExp(qa, pool, p, 0, NULL, NULL));
  }
  double t1 = now_us();
  CHECK(urQueueFinish(qa));
  return (t1 - t0) / n;
}

/* Alternating queues: allocate and free on one, hand over with the free's
 * event, allocate (waiting on it) and free on the other, hand back. */
static double two_queue(ur_usm_pool_handle_t pool, size_t *distinct) {
  ur_event_handle_t ea = NULL, eb = NULL;
  void *seen[64];
  size_t nseen = 0;
  void *p;
  double t0 = now_us();
  for (int i = 0; i < iters; ++i) {
    CHECK(urEnqueueUSMDeviceAllocExp(qa, pool, bytes, NULL, eb ? 1 : 0, eb ? &eb : NULL, &p, NULL));
    if (i < 1000) {
      size_t k = 0;
      while (k < nseen && seen[k] != p) ++k;
      if (k == nseen && nseen < 64) seen[nseen++] = p;
    }
    if (ea) CHECK(urEventRelease(ea));
    CHECK(urEnqueueUSMFreeExp(qa, pool, p, 0, NULL, &ea));
    CHECK(urEnqueueUSMDeviceAllocExp(qb, pool, bytes, NULL, 1, &ea, &p, NULL));
    if (i < 1000) {
      size_t k = 0;
      while (k < nseen && seen[k] != p) ++k;
      if (k == nseen && nseen < 64) seen[nseen++] = p;
    }
    if (eb) CHECK(urEventRelease(eb));
    CHECK(urEnqueueUSMFreeExp(qb, pool, p, 0, NULL, &eb));
  }
  double t1 = now_us();
  CHECK(urQueueFinish(qa));
  CHECK(urQueueFinish(qb));
  if (ea) CHECK(urEventRelease(ea));
  if (eb) CHECK(urEventRelease(eb));
  *distinct = nseen;
  return (t1 - t0) / iters;
}

/* The driver calls a native pool's pair comes down to, resolved from
 * libcuda at run time (the CUDA driver API's own names and signatures). */
typedef int (*cu_alloc_from_pool_async_t)(unsigned long long *, size_t, void *, void *);
typedef int (*cu_alloc_async_t)(unsigned long long *, size_t, void *);
typedef int (*cu_free_async_t)(unsigned long long, void *);
typedef int (*cu_pool_create_t)(void **, const void *);
typedef int (*cu_pool_destroy_t)(void *);
typedef int (*cu_stream_sync_t)(void *);

static void *cu_symbol(void *lib, const char *name) {
  void *f = dlsym(lib, name);
  if (!f) {
    fprintf(stderr, "ur_async_alloc: libcuda has no %s\n", name);
    exit(1);
  }
  return f;
}

#define CU_CHECK(call)                                                       \
  do {                                                                       \
    int cu_result_ = (call);                                                 \
    if (cu_result_ != 0) {                                                   \
      fprintf(stderr, "ur_async_alloc: %s failed with CUDA error %d\n",     \
              #call, cu_result_);                                            \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Rounds (in alternating order) of: the native UR pool's pair, cuMemAllocAsync + cuMemFreeAsync
 * (what cudaMallocAsync calls: the device's default pool), and
 * cuMemAllocFromPoolAsync + cuMemFreeAsync on a pool of our own, all on
 * qa's stream; medians of the rounds and their ratios. */
static void native_against_driver(ur_usm_pool_handle_t native_pool) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "ur_async_alloc: cannot open libcuda.so.1\n");
    exit(1);
  }
  cu_alloc_from_pool_async_t alloc_from_pool = (cu_alloc_from_pool_async_t)cu_symbol(lib, "cuMemAllocFromPoolAsync");
  cu_alloc_async_t alloc_async = (cu_alloc_async_t)cu_symbol(lib, "cuMemAllocAsync");
  cu_free_async_t free_async = (cu_free_async_t)cu_symbol(lib, "cuMemFreeAsync");
  cu_pool_create_t pool_create = (cu_pool_create_t)cu_symbol(lib, "cuMemPoolCreate");
  cu_pool_destroy_t pool_destroy = (cu_pool_destroy_t)cu_symbol(lib, "cuMemPoolDestroy");
  cu_stream_sync_t stream_sync = (cu_stream_sync_t)cu_symbol(lib, "cuStreamSynchronize");
  ur_native_handle_t native = 0;
  CHECK(urQueueGetNativeHandle(qa, NULL, &native));
  void *stream = (void *)native;
  int ordinal = 0;
  CHECK(urDeviceGetNativeHandle(device, &native));
  ordinal = (int)native;
  /* CUmemPoolProps: allocType PINNED (1), no handle types, location
   * DEVICE (1) and ordinal; the rest zero (the buffer is larger than any
   * version of the struct). */
  int props[64] = {0};
  props[0] = 1;
  props[2] = 1;
  props[3] = ordinal;
  void *own = NULL;
  CU_CHECK(pool_create(&own, props));
  enum { ROUNDS = 7 };
  double ours[ROUNDS], dflt[ROUNDS], pool[ROUNDS];
  int n = iters;
  unsigned long long d;
  for (int r = 0; r < ROUNDS; ++r) {
    /* Ours runs first in even rounds and last in odd ones, so that
     * neither side always follows the other (a warm cache, a drained
     * stream, a clock that ramps). */
    if (r % 2 == 0) ours[r] = async_pair(native_pool, urEnqueueUSMDeviceAllocExp, n);
    double t0 = now_us();
    for (int i = 0; i < n; ++i) {
      CU_CHECK(alloc_async(&d, bytes, stream));
      CU_CHECK(free_async(d, stream));
    }
    double t1 = now_us();
    CU_CHECK(stream_sync(stream));
    dflt[r] = (t1 - t0) / n;
    t0 = now_us();
    for (int i = 0; i < n; ++i) {
      CU_CHECK(alloc_from_pool(&d, bytes, own, stream));
      CU_CHECK(free_async(d, stream));
    }
    t1 = now_us();
    CU_CHECK(stream_sync(stream));
    pool[r] = (t1 - t0) / n;
    if (r % 2 == 1) ours[r] = async_pair(native_pool, urEnqueueUSMDeviceAllocExp, n);
  }
  qsort(ours, ROUNDS, sizeof ours[0], by_value);
  qsort(dflt, ROUNDS, sizeof dflt[0], by_value);
  qsort(pool, ROUNDS, sizeof pool[0], by_value);
  double o = ours[ROUNDS / 2], a = dflt[ROUNDS / 2], b = pool[ROUNDS / 2];
  printf("same_process_native_pair_us %.3f\n", o);
  printf("same_process_driver_default_pool_pair_us %.3f\n", a);
  printf("same_process_driver_own_pool_pair_us %.3f\n", b);
  printf("native_over_driver_default_pool %.2f\n", o / a);
  printf("native_over_driver_own_pool %.2f\n", o / b);
  CU_CHECK(pool_destroy(own));
}

static void run_pool(const char *name, ur_usm_pool_handle_t pool) {
  /* UR_ASYNC_ALLOC_ONLY=<name> runs one pool's figures (for a profiler). */
  const char *only = getenv("UR_ASYNC_ALLOC_ONLY");
  if (only && strcmp(only, name) != 0) return;
  size_t distinct = 0;
  printf("ur_%s_async_pair_us %.3f\n", name, async_pair(pool, urEnqueueUSMDeviceAllocExp, iters));
  /* UR_ASYNC_ALLOC_PAIRS_ONLY=1: only the pair figure (for a profiler). */
  if (getenv("UR_ASYNC_ALLOC_PAIRS_ONLY")) return;
  CHECK(urUSMPoolSetInfoExp(pool, UR_USM_POOL_INFO_RESERVED_HIGH_EXP, &(size_t){0}, sizeof(size_t)));
  printf("ur_%s_two_queue_iter_us %.3f\n", name, two_queue(pool, &distinct));
  printf("ur_%s_two_queue_distinct_blocks %zu\n", name, distinct);
  printf("ur_%s_pool_reserved_high_bytes %zu\n", name, pool_stat(pool, UR_USM_POOL_INFO_RESERVED_HIGH_EXP));
  printf("ur_%s_pool_used_current_bytes %zu\n", name, pool_stat(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP));
}

int main(int argc, char **argv) {
  bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : (1u << 20);
  iters = argc > 2 ? atoi(argv[2]) : 100000;

  CHECK(urLoaderInit(0, NULL));
  uint32_t n = 0;
  CHECK(urAdapterGet(0, NULL, &n));
  ur_adapter_handle_t adapters[16];
  if (n > 16) n = 16;
  CHECK(urAdapterGet(n, adapters, NULL));
  ur_platform_handle_t platform = NULL;
  for (uint32_t i = 0; i < n && !platform; ++i) {
    ur_backend_t backend;
    CHECK(urAdapterGetInfo(adapters[i], UR_ADAPTER_INFO_BACKEND, sizeof backend, &backend, NULL));
    uint32_t np = 0;
    if (backend == UR_BACKEND_CUDA && urPlatformGet(adapters[i], 1, &platform, &np) == UR_RESULT_SUCCESS && np == 0)
      platform = NULL;
  }
  if (!platform) {
    fprintf(stderr, "ur_async_alloc: no CUDA platform\n");
    return 2;
  }
  CHECK(urDeviceGet(platform, UR_DEVICE_TYPE_GPU, 1, &device, NULL));
  char name[256];
  CHECK(urDeviceGetInfo(device, UR_DEVICE_INFO_NAME, sizeof name, name, NULL));
  printf("# device: %s, %zu bytes per allocation, %d iterations\n", name, bytes, iters);

  CHECK(urContextCreate(1, &device, NULL, &context));
  CHECK(urQueueCreate(context, device, NULL, &qa));
  CHECK(urQueueCreate(context, device, NULL, &qb));

  /* What one call through the loader into the adapter costs. */
  double f0 = now_us();
  for (int i = 0; i < 1000000; ++i) CHECK(urQueueFlush(qa));
  double f1 = now_us();
  printf("ur_null_call_ns %.1f\n", (f1 - f0) / 1000.0);

  ur_usm_pool_handle_t default_pool;
  CHECK(urUSMPoolGetDefaultDevicePoolExp(context, device, &default_pool));
  run_pool("default", default_pool);

  ur_usm_pool_desc_t native_desc = {UR_STRUCTURE_TYPE_USM_POOL_DESC, NULL,
                                    UR_USM_POOL_FLAG_USE_NATIVE_MEMORY_POOL_EXP};
  ur_usm_pool_handle_t native_pool;
  CHECK(urUSMPoolCreateExp(context, device, &native_desc, &native_pool));
  run_pool("native", native_pool);
  const char *only = getenv("UR_ASYNC_ALLOC_ONLY");
  if (!only || strcmp(only, "native") == 0) native_against_driver(native_pool);

  ur_usm_pool_desc_t engine_desc = {UR_STRUCTURE_TYPE_USM_POOL_DESC, NULL, 0};
  ur_usm_pool_handle_t engine_pool;
  CHECK(urUSMPoolCreateExp(context, device, &engine_desc, &engine_pool));
  run_pool("engine", engine_pool);

  if (getenv("UR_ASYNC_ALLOC_PAIRS_ONLY")) goto done;
  printf("ur_default_shared_async_pair_us %.3f\n", async_pair(NULL, urEnqueueUSMSharedAllocExp, iters / 10));
  printf("ur_default_host_async_pair_us %.3f\n", async_pair(NULL, urEnqueueUSMHostAllocExp, iters / 10));

  int blocking = iters / 50 > 0 ? iters / 50 : 1;
  void *p;
  double t0 = now_us();
  for (int i = 0; i < blocking; ++i) {
    CHECK(urUSMDeviceAlloc(context, device, NULL, NULL, bytes, &p));
    CHECK(urUSMFree(context, p));
  }
  double t1 = now_us();
  printf("ur_blocking_pair_us %.3f\n", (t1 - t0) / blocking);

done:
  CHECK(urUSMPoolDestroyExp(context, device, engine_pool));
  CHECK(urUSMPoolDestroyExp(context, device, native_pool));
  CHECK(urQueueRelease(qa));
  CHECK(urQueueRelease(qb));
  CHECK(urContextRelease(context));
  for (uint32_t i = 0; i < n; ++i) CHECK(urAdapterRelease(adapters[i]));
  CHECK(urLoaderTearDown());
  return 0;
}
