/* A small client of the C API, run under valgrind by tests/valgrind.sh and
 * on its own as a retention check.
 *
 *   lifecycle [COMMANDS [FINISH_EVERY [norss]]]
 *
 * Initialises the loader twice (init/teardown counting), then on the first
 * device of the first adapter: a context, an in-order queue, a burst of
 * COMMANDS small USM fills with an event each and one urQueueFinish, then
 * COMMANDS fills with urQueueFinish every FINISH_EVERY of them, an async
 * alloc/free pair per batch, and an event wait. It fails when the resident
 * set grew by more than a bound after the burst's urQueueFinish, or after
 * the steady phase's warm-up: the queue must give back per-command
 * bookkeeping at urQueueFinish. Then it releases
 * everything, tears the loader down, initialises it again and tears it down
 * again (a later init must work). Prints what it checked and exits non-zero
 * on the first failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ur_api.h"

static int failures = 0;

#define CHECK(call)                                                         \
  do {                                                                      \
    ur_result_t r_ = (call);                                                \
    if (r_ != UR_RESULT_SUCCESS) {                                          \
      fprintf(stderr, "%s:%d: %s returned %d\n", __FILE__, __LINE__, #call, \
              (int)r_);                                                     \
      return 1;                                                             \
    }                                                                       \
  } while (0)

static long rss_kib(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return -1;
  if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
  fclose(f);
  return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static int check_rss = 1;

/* A burst: `commands` fills, each with an event released at once, and one
 * urQueueFinish. The queue's bookkeeping grows with the commands in flight;
 * urQueueFinish must give it back. */
static int burst(ur_queue_handle_t q, void *buf, long commands) {
  long before = rss_kib();
  for (long i = 0; i < commands; i++) {
    uint32_t pattern = (uint32_t)i;
    ur_event_handle_t e = NULL;
    CHECK(urEnqueueUSMFill(q, buf, sizeof pattern, &pattern, 64, 0, NULL, &e));
    CHECK(urEventRelease(e));
  }
  CHECK(urQueueFinish(q));
  long grown = rss_kib() - before;
  /* The old behaviour kept ~500 B per command: 48 MiB at 100 000. */
  long bound = 4096;
  if (check_rss) {
    printf("burst of %ld commands: resident set +%ld KiB after urQueueFinish (bound %ld KiB)\n", commands, grown, bound);
    if (grown > bound) {
      fprintf(stderr, "FAIL: the queue kept %ld KiB after a burst of %ld commands\n", grown, commands);
      failures++;
    }
  }
  return 0;
}

/* Steady work: fills with urQueueFinish every `finish_every`, an async
 * alloc/free pair and an event wait per batch; after a warm-up the resident
 * set must not grow. */
static int steady(ur_queue_handle_t q, void *buf, long commands, long finish_every) {
  long warm = finish_every * 4, base = -1, peak = 0;
  for (long i = 0; i < commands; i++) {
    uint32_t pattern = (uint32_t)i;
    CHECK(urEnqueueUSMFill(q, buf, sizeof pattern, &pattern, 64, 0, NULL, NULL));
    if ((i + 1) % finish_every == 0) {
      void *p = NULL;
      ur_event_handle_t e = NULL;
      CHECK(urEnqueueUSMHostAllocExp(q, NULL, 256, NULL, 0, NULL, &p, NULL));
      CHECK(urEnqueueUSMFreeExp(q, NULL, p, 0, NULL, &e));
      CHECK(urEventWait(1, &e));
      CHECK(urEventRelease(e));
      CHECK(urQueueFinish(q));
      long now = rss_kib();
      if (i + 1 == warm) base = now;
      if (base >= 0 && now > peak) peak = now;
    }
  }
  if (check_rss && base >= 0) {
    long bound = 1024;
    printf("steady: resident set %ld KiB after warm-up, peak %ld KiB over %ld more commands (bound +%ld KiB)\n",
           base, peak, commands - warm, bound);
    if (peak - base > bound) {
      fprintf(stderr, "FAIL: the resident set grew by %ld KiB with urQueueFinish every %ld\n", peak - base,
              finish_every);
      failures++;
    }
  }
  return 0;
}

static int run_commands(ur_context_handle_t ctx, ur_queue_handle_t q, long commands, long finish_every) {
  void *buf = NULL;
  CHECK(urUSMHostAlloc(ctx, NULL, NULL, 4096, &buf));
  if (burst(q, buf, commands)) return 1;
  if (steady(q, buf, commands, finish_every)) return 1;
  CHECK(urUSMFree(ctx, buf));
  return 0;
}

static int session(long commands, long finish_every) {
  CHECK(urLoaderInit(0, NULL));
  uint32_t n = 0;
  CHECK(urAdapterGet(0, NULL, &n));
  if (n == 0) { fprintf(stderr, "no adapter\n"); return 1; }
  ur_adapter_handle_t adapter;
  CHECK(urAdapterGet(1, &adapter, NULL));
  ur_platform_handle_t platform;
  CHECK(urPlatformGet(adapter, 1, &platform, NULL));
  ur_device_handle_t device;
  CHECK(urDeviceGet(platform, UR_DEVICE_TYPE_ALL, 1, &device, NULL));
  ur_context_handle_t ctx;
  CHECK(urContextCreate(1, &device, NULL, &ctx));
  ur_queue_handle_t q;
  CHECK(urQueueCreate(ctx, device, NULL, &q));
  if (run_commands(ctx, q, commands, finish_every)) return 1;
  CHECK(urQueueRelease(q));
  CHECK(urContextRelease(ctx));
  CHECK(urDeviceRelease(device));
  CHECK(urAdapterRelease(adapter));
  CHECK(urLoaderTearDown());
  return 0;
}

int main(int argc, char **argv) {
  long commands = argc > 1 ? atol(argv[1]) : 100000;
  long finish_every = argc > 2 ? atol(argv[2]) : 1000;
  /* Under valgrind the resident set is valgrind's: "norss" skips its checks. */
  if (argc > 3 && strcmp(argv[3], "norss") == 0) check_rss = 0;
  if (finish_every <= 0) finish_every = 1;
  /* A nested init and teardown only count. */
  CHECK(urLoaderInit(0, NULL));
  if (session(commands, finish_every)) return 1;
  CHECK(urLoaderTearDown());
  /* After the last teardown, an entry point is uninitialised ... */
  uint32_t n = 0;
  if (urAdapterGet(0, NULL, &n) != UR_RESULT_ERROR_UNINITIALIZED) {
    fprintf(stderr, "FAIL: urAdapterGet after teardown did not answer UNINITIALIZED\n");
    failures++;
  }
  /* ... and a later init works again. */
  if (session(commands / 10, finish_every)) return 1;
  if (urLoaderTearDown() != UR_RESULT_ERROR_UNINITIALIZED) {
    fprintf(stderr, "FAIL: an unbalanced urLoaderTearDown did not answer UNINITIALIZED\n");
    failures++;
  }
  printf("%s\n", failures ? "lifecycle: FAILED" : "lifecycle: ok");
  return failures ? 1 : 0;
}
