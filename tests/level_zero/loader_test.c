/* The host driver (drivers/ze_host) through Debian's Level Zero loader:
 * scripts/level_zero_env.sh points ZE_ENABLE_ALT_DRIVERS at the driver, and
 * this program uses nothing but the loader's ze_api.h entry points.
 * check_commands() runs queues, command lists, events and fences: commands
 * run on the driver's worker threads, so every "not yet" below is a real
 * race that the event order must win.
 * Prints one line per failed check and ends with "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#include <level_zero/ze_api.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

static int passed, failed;

#define CHECK(cond)                                                           \
  do {                                                                        \
    if (cond) {                                                               \
      passed++;                                                               \
    } else {                                                                  \
      failed++;                                                               \
      printf("FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);                \
    }                                                                         \
  } while (0)

/* A call's result against the expected one, with both shown on failure. */
#define EXPECT(call, want)                                                    \
  do {                                                                        \
    ze_result_t got_ = (call);                                                \
    if (got_ == (want)) {                                                     \
      passed++;                                                               \
    } else {                                                                  \
      failed++;                                                               \
      printf("FAILED %s:%d: %s = 0x%x, want %s (0x%x)\n", __FILE__, __LINE__, \
             #call, (unsigned)got_, #want, (unsigned)(want));                 \
    }                                                                         \
  } while (0)

static ze_context_desc_t context_desc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
static ze_host_mem_alloc_desc_t host_desc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
static ze_device_mem_alloc_desc_t device_desc = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};

/* Properties and address range of `p` (base and interior) match the allocation. */
static void check_allocation(ze_context_handle_t ctx, ze_device_handle_t dev, void *p, size_t size,
                             ze_memory_type_t kind, int has_device) {
  char *interior = (char *)p + size / 2 + 3;
  ze_memory_allocation_properties_t props = {ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES, NULL};
  ze_device_handle_t owner = (ze_device_handle_t)(uintptr_t)1;
  EXPECT(zeMemGetAllocProperties(ctx, p, &props, &owner), ZE_RESULT_SUCCESS);
  CHECK(props.type == kind);
  CHECK(props.pageSize > 0);
  CHECK(owner == (has_device ? dev : NULL));
  uint64_t id = props.id;
  memset(&props, 0, sizeof props);
  props.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
  EXPECT(zeMemGetAllocProperties(ctx, interior, &props, NULL), ZE_RESULT_SUCCESS);
  CHECK(props.type == kind && props.id == id);

  void *base = NULL;
  size_t range = 0;
  EXPECT(zeMemGetAddressRange(ctx, p, &base, &range), ZE_RESULT_SUCCESS);
  CHECK(base == p && range == size);
  base = NULL;
  range = 0;
  EXPECT(zeMemGetAddressRange(ctx, interior, &base, &range), ZE_RESULT_SUCCESS);
  CHECK(base == p && range == size);
  EXPECT(zeMemGetAddressRange(ctx, interior, NULL, &range), ZE_RESULT_SUCCESS);
  /* Host memory: the host can write and read every byte of every kind. */
  memset(p, 0xab, size);
  CHECK(((unsigned char *)p)[size - 1] == 0xab);
}

/* ---- Command queues, command lists, events and fences ------------------ */

static ze_command_queue_desc_t queue_desc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0,
                                             ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
static ze_command_list_desc_t list_desc = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, 0, 0};
static ze_fence_desc_t fence_desc = {ZE_STRUCTURE_TYPE_FENCE_DESC, NULL, 0};

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static ze_event_handle_t make_event(ze_event_pool_handle_t pool, uint32_t index) {
  ze_event_desc_t d = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, index, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
  ze_event_handle_t e = NULL;
  EXPECT(zeEventCreate(pool, &d, &e), ZE_RESULT_SUCCESS);
  return e;
}

/* Every byte of buf[0..size) is byte i % pattern_size of the pattern. */
static int filled_with(const unsigned char *buf, size_t size, const unsigned char *pattern, size_t pattern_size) {
  for (size_t i = 0; i < size; i++)
    if (buf[i] != pattern[i % pattern_size]) return 0;
  return 1;
}

static int all_bytes(const unsigned char *buf, size_t size, unsigned char v) {
  for (size_t i = 0; i < size; i++)
    if (buf[i] != v) return 0;
  return 1;
}

static void check_commands(ze_driver_handle_t driver, ze_device_handle_t dev) {
  ze_context_handle_t ctx = NULL;
  EXPECT(zeContextCreate(driver, &context_desc, &ctx), ZE_RESULT_SUCCESS);

  /* Truthful timer and queue group properties. */
  ze_device_properties_t p10 = {ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, NULL};
  ze_device_properties_t p12 = {ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2, NULL};
  EXPECT(zeDeviceGetProperties(dev, &p10), ZE_RESULT_SUCCESS);
  EXPECT(zeDeviceGetProperties(dev, &p12), ZE_RESULT_SUCCESS);
  CHECK(p10.timerResolution == 1);          /* nanoseconds per tick */
  CHECK(p12.timerResolution == 1000000000); /* ticks per second */
  CHECK(p10.timestampValidBits == 64 && p10.kernelTimestampValidBits == 64);
  uint32_t count = 1;
  ze_command_queue_group_properties_t group = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES, NULL};
  EXPECT(zeDeviceGetCommandQueueGroupProperties(dev, &count, &group), ZE_RESULT_SUCCESS);
  CHECK(count == 1);
  CHECK((group.flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) && (group.flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY));
  CHECK(group.maxMemoryFillPatternSize == 128 && group.numQueues >= 1);

  ze_event_pool_desc_t pool_desc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL,
                                    ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 16};
  ze_event_pool_handle_t pool = NULL;
  EXPECT(zeEventPoolCreate(ctx, &pool_desc, 1, &dev, &pool), ZE_RESULT_SUCCESS);
  ze_event_handle_t ev[16] = {0};
  for (uint32_t i = 0; i < 16; i++) ev[i] = make_event(pool, i);

  ze_command_list_handle_t imm = NULL, imm2 = NULL;
  EXPECT(zeCommandListCreateImmediate(ctx, dev, &queue_desc, &imm), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandListCreateImmediate(ctx, dev, &queue_desc, &imm2), ZE_RESULT_SUCCESS);

  enum { N = 4096 + 7 };
  unsigned char *dbuf = NULL, *hbuf = NULL, *sbuf = NULL;
  EXPECT(zeMemAllocDevice(ctx, &device_desc, N, 0, dev, (void **)&dbuf), ZE_RESULT_SUCCESS);
  EXPECT(zeMemAllocHost(ctx, &host_desc, N, 0, (void **)&hbuf), ZE_RESULT_SUCCESS);
  EXPECT(zeMemAllocShared(ctx, &device_desc, &host_desc, N, 0, dev, (void **)&sbuf), ZE_RESULT_SUCCESS);
  if (!pool || !imm || !imm2 || !dbuf || !hbuf || !sbuf) {
    printf("FAILED: setup for command checks\n");
    failed++;
    return;
  }

  /* Fill with every pattern size, copy back: byte-exact (N is not a
   * multiple of any pattern size above 1, so the tail is a partial pattern). */
  unsigned char pattern[128];
  for (int i = 0; i < 128; i++) pattern[i] = (unsigned char)(i * 7 + 1);
  for (size_t ps = 1; ps <= 128; ps *= 2) {
    memset(hbuf, 0, N);
    EXPECT(zeEventHostReset(ev[0]), ZE_RESULT_SUCCESS);
    EXPECT(zeCommandListAppendMemoryFill(imm, dbuf, pattern, ps, N, NULL, 0, NULL), ZE_RESULT_SUCCESS);
    EXPECT(zeCommandListAppendMemoryCopy(imm, hbuf, dbuf, N, ev[0], 0, NULL), ZE_RESULT_SUCCESS);
    EXPECT(zeEventHostSynchronize(ev[0], UINT64_MAX), ZE_RESULT_SUCCESS);
    if (!filled_with(hbuf, N, pattern, ps)) {
      failed++;
      printf("FAILED %s:%d: fill with a %zu-byte pattern, copied back\n", __FILE__, __LINE__, ps);
    } else {
      passed++;
    }
  }

  /* An append that waits on an event the host signals later: not done
   * before (status, data), done after. */
  ze_event_handle_t gate = ev[1], done = ev[2];
  memset(sbuf, 0x11, N);
  EXPECT(zeCommandListAppendMemoryFill(imm, sbuf, pattern, 1, N, done, 1, &gate), ZE_RESULT_SUCCESS);
  sleep_ms(50);
  EXPECT(zeEventQueryStatus(done), ZE_RESULT_NOT_READY);
  EXPECT(zeEventHostSynchronize(done, 0), ZE_RESULT_NOT_READY);
  EXPECT(zeEventHostSynchronize(done, 2000000), ZE_RESULT_NOT_READY); /* 2 ms */
  CHECK(all_bytes(sbuf, N, 0x11));
  EXPECT(zeEventHostSignal(gate), ZE_RESULT_SUCCESS);
  EXPECT(zeEventHostSynchronize(done, UINT64_MAX), ZE_RESULT_SUCCESS);
  EXPECT(zeEventQueryStatus(done), ZE_RESULT_SUCCESS);
  CHECK(all_bytes(sbuf, N, pattern[0]));

  /* Order across two immediate lists through events: imm2's copy waits for
   * imm's, which waits for the host. */
  ze_event_handle_t gate2 = ev[3], first = ev[4], second = ev[5];
  memset(hbuf, 0x22, N);
  memset(dbuf, 0x33, N);
  memset(sbuf, 0x44, N);
  EXPECT(zeCommandListAppendMemoryCopy(imm2, sbuf, dbuf, N, second, 1, &first), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandListAppendMemoryCopy(imm, dbuf, hbuf, N, first, 1, &gate2), ZE_RESULT_SUCCESS);
  sleep_ms(20);
  EXPECT(zeEventQueryStatus(first), ZE_RESULT_NOT_READY);
  EXPECT(zeEventQueryStatus(second), ZE_RESULT_NOT_READY);
  CHECK(all_bytes(sbuf, N, 0x44) && all_bytes(dbuf, N, 0x33));
  EXPECT(zeEventHostSignal(gate2), ZE_RESULT_SUCCESS);
  EXPECT(zeEventHostSynchronize(second, UINT64_MAX), ZE_RESULT_SUCCESS);
  CHECK(all_bytes(sbuf, N, 0x22)); /* host's bytes, through dbuf, in order */

  /* Timestamps: the signalling command's start and end, in order, inside
   * the device timestamps read around them. */
  uint64_t host0 = 0, dev0 = 0, host1 = 0, dev1 = 0;
  ze_kernel_timestamp_result_t t1, t2;
  EXPECT(zeDeviceGetGlobalTimestamps(dev, &host0, &dev0), ZE_RESULT_SUCCESS);
  EXPECT(zeEventHostReset(first), ZE_RESULT_SUCCESS);
  EXPECT(zeEventHostReset(second), ZE_RESULT_SUCCESS);
  EXPECT(zeEventQueryKernelTimestamp(first, &t1), ZE_RESULT_NOT_READY);
  EXPECT(zeCommandListAppendMemoryCopy(imm, dbuf, hbuf, N, first, 0, NULL), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandListAppendMemoryFill(imm, dbuf, pattern, 4, N, second, 0, NULL), ZE_RESULT_SUCCESS);
  EXPECT(zeEventHostSynchronize(second, UINT64_MAX), ZE_RESULT_SUCCESS);
  EXPECT(zeDeviceGetGlobalTimestamps(dev, &host1, &dev1), ZE_RESULT_SUCCESS);
  EXPECT(zeEventQueryKernelTimestamp(first, &t1), ZE_RESULT_SUCCESS);
  EXPECT(zeEventQueryKernelTimestamp(second, &t2), ZE_RESULT_SUCCESS);
  CHECK(dev0 <= t1.global.kernelStart && t1.global.kernelStart <= t1.global.kernelEnd);
  CHECK(t1.global.kernelEnd <= t2.global.kernelStart && t2.global.kernelStart <= t2.global.kernelEnd);
  CHECK(t2.global.kernelEnd <= dev1 && host0 <= host1);
  CHECK(t1.context.kernelStart <= t1.context.kernelEnd);
  /* The same timestamps, written by a command. */
  ze_kernel_timestamp_result_t *results = (ze_kernel_timestamp_result_t *)hbuf;
  ze_event_handle_t both[2] = {first, second};
  EXPECT(zeEventHostReset(ev[6]), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandListAppendQueryKernelTimestamps(imm, 2, both, results, NULL, ev[6], 0, NULL), ZE_RESULT_SUCCESS);
  EXPECT(zeEventHostSynchronize(ev[6], UINT64_MAX), ZE_RESULT_SUCCESS);
  CHECK(memcmp(&results[0], &t1, sizeof t1) == 0 && memcmp(&results[1], &t2, sizeof t2) == 0);

  /* Event reset by a command, in order behind a host-gated wait. */
  ze_event_handle_t reset_me = ev[7], after = ev[8], gate3 = ev[9];
  EXPECT(zeEventHostSignal(reset_me), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandListAppendWaitOnEvents(imm, 1, &gate3), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandListAppendEventReset(imm, reset_me), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandListAppendSignalEvent(imm, after), ZE_RESULT_SUCCESS);
  sleep_ms(10);
  EXPECT(zeEventQueryStatus(reset_me), ZE_RESULT_SUCCESS);
  EXPECT(zeEventHostSignal(gate3), ZE_RESULT_SUCCESS);
  EXPECT(zeEventHostSynchronize(after, UINT64_MAX), ZE_RESULT_SUCCESS);
  EXPECT(zeEventQueryStatus(reset_me), ZE_RESULT_NOT_READY);
  EXPECT(zeEventHostReset(after), ZE_RESULT_SUCCESS);
  EXPECT(zeEventQueryStatus(after), ZE_RESULT_NOT_READY);

  /* A synchronous immediate list is done when the append returns. */
  ze_command_queue_desc_t sync_desc = queue_desc;
  sync_desc.mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
  ze_command_list_handle_t sync_list = NULL;
  EXPECT(zeCommandListCreateImmediate(ctx, dev, &sync_desc, &sync_list), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandListAppendMemoryFill(sync_list, hbuf, pattern + 5, 1, N, after, 0, NULL), ZE_RESULT_SUCCESS);
  EXPECT(zeEventQueryStatus(after), ZE_RESULT_SUCCESS);
  CHECK(all_bytes(hbuf, N, pattern[5]));
  EXPECT(zeCommandListDestroy(sync_list), ZE_RESULT_SUCCESS);

  /* A 2D region copy: a 5x3 box from (2,1) of a 16-pitched buffer to
   * (1,2) of a 9-pitched one; nothing else changes. */
  for (int i = 0; i < 16 * 8; i++) hbuf[i] = (unsigned char)i;
  memset(sbuf, 0, 9 * 8);
  ze_copy_region_t src_region = {2, 1, 0, 5, 3, 1}, dst_region = {1, 2, 0, 5, 3, 1};
  EXPECT(zeEventHostReset(after), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandListAppendMemoryCopyRegion(imm, sbuf, &dst_region, 9, 0, hbuf, &src_region, 16, 0, after, 0, NULL),
         ZE_RESULT_SUCCESS);
  EXPECT(zeEventHostSynchronize(after, UINT64_MAX), ZE_RESULT_SUCCESS);
  int region_ok = 1;
  for (int y = 0; y < 8; y++)
    for (int x = 0; x < 9; x++) {
      int inside = y >= 2 && y < 5 && x >= 1 && x < 6;
      unsigned char want = inside ? (unsigned char)((y - 2 + 1) * 16 + (x - 1 + 2)) : 0;
      if (sbuf[y * 9 + x] != want) region_ok = 0;
    }
  CHECK(region_ok);

  /* A regular list on a queue: executed twice, each time with a fence;
   * the first execution waits for the host. */
  ze_command_queue_handle_t queue = NULL, queue2 = NULL;
  EXPECT(zeCommandQueueCreate(ctx, dev, &queue_desc, &queue), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandQueueCreate(ctx, dev, &queue_desc, &queue2), ZE_RESULT_SUCCESS);
  ze_command_list_handle_t list = NULL;
  EXPECT(zeCommandListCreate(ctx, dev, &list_desc, &list), ZE_RESULT_SUCCESS);
  ze_event_handle_t gate4 = ev[10], copied = ev[11];
  EXPECT(zeCommandListAppendMemoryFill(list, dbuf, pattern + 9, 2, N, NULL, 1, &gate4), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandListAppendBarrier(list, NULL, 0, NULL), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandListAppendMemoryCopy(list, hbuf, dbuf, N, copied, 0, NULL), ZE_RESULT_SUCCESS);
  /* Not closed yet: not executable. */
  EXPECT(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT(zeCommandListClose(list), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandListAppendBarrier(list, NULL, 0, NULL), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  ze_fence_handle_t fence = NULL, fence2 = NULL, fence_on = NULL;
  EXPECT(zeFenceCreate(queue, &fence_desc, &fence), ZE_RESULT_SUCCESS);
  EXPECT(zeFenceCreate(queue2, &fence_desc, &fence2), ZE_RESULT_SUCCESS);
  ze_fence_desc_t signaled_desc = {ZE_STRUCTURE_TYPE_FENCE_DESC, NULL, ZE_FENCE_FLAG_SIGNALED};
  EXPECT(zeFenceCreate(queue, &signaled_desc, &fence_on), ZE_RESULT_SUCCESS);
  EXPECT(zeFenceQueryStatus(fence_on), ZE_RESULT_SUCCESS);
  EXPECT(zeFenceQueryStatus(fence), ZE_RESULT_NOT_READY);
  memset(hbuf, 0, N);
  EXPECT(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence), ZE_RESULT_SUCCESS);
  sleep_ms(20);
  EXPECT(zeFenceQueryStatus(fence), ZE_RESULT_NOT_READY);
  EXPECT(zeFenceHostSynchronize(fence, 1000000), ZE_RESULT_NOT_READY);
  EXPECT(zeCommandQueueSynchronize(queue, 0), ZE_RESULT_NOT_READY);
  EXPECT(zeEventQueryStatus(copied), ZE_RESULT_NOT_READY);
  CHECK(all_bytes(hbuf, N, 0));
  EXPECT(zeEventHostSignal(gate4), ZE_RESULT_SUCCESS);
  EXPECT(zeFenceHostSynchronize(fence, UINT64_MAX), ZE_RESULT_SUCCESS);
  EXPECT(zeFenceQueryStatus(fence), ZE_RESULT_SUCCESS);
  EXPECT(zeEventQueryStatus(copied), ZE_RESULT_SUCCESS);
  CHECK(filled_with(hbuf, N, pattern + 9, 2));
  /* Second execution, from a clean slate. */
  memset(hbuf, 0, N);
  EXPECT(zeFenceReset(fence), ZE_RESULT_SUCCESS);
  EXPECT(zeFenceQueryStatus(fence), ZE_RESULT_NOT_READY);
  EXPECT(zeEventHostReset(copied), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandQueueSynchronize(queue, UINT64_MAX), ZE_RESULT_SUCCESS);
  EXPECT(zeFenceQueryStatus(fence), ZE_RESULT_SUCCESS);
  EXPECT(zeEventQueryStatus(copied), ZE_RESULT_SUCCESS);
  CHECK(filled_with(hbuf, N, pattern + 9, 2));
  /* Reset, re-record, run again. */
  EXPECT(zeCommandListReset(list), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandListAppendMemoryFill(list, hbuf, pattern + 3, 1, N, NULL, 0, NULL), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandListClose(list), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandQueueSynchronize(queue, UINT64_MAX), ZE_RESULT_SUCCESS);
  CHECK(all_bytes(hbuf, N, pattern[3]));

  /* Bad input: the codes Level Zero names. */
  ze_command_queue_handle_t q_bad = NULL;
  ze_command_list_handle_t l_bad = NULL;
  ze_event_handle_t e_bad = NULL;
  ze_event_pool_handle_t p_bad = NULL;
  ze_fence_handle_t f_bad = NULL;
  ze_command_queue_desc_t bad_desc = queue_desc;
  EXPECT(zeCommandQueueCreate(NULL, dev, &queue_desc, &q_bad), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeCommandQueueCreate(ctx, NULL, &queue_desc, &q_bad), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeCommandQueueCreate(ctx, dev, NULL, &q_bad), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT(zeCommandQueueCreate(ctx, dev, &queue_desc, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  bad_desc.mode = 7;
  EXPECT(zeCommandQueueCreate(ctx, dev, &bad_desc, &q_bad), ZE_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT(zeCommandListCreateImmediate(ctx, dev, &bad_desc, &l_bad), ZE_RESULT_ERROR_INVALID_ENUMERATION);
  bad_desc = queue_desc;
  bad_desc.ordinal = 3;
  EXPECT(zeCommandQueueCreate(ctx, dev, &bad_desc, &q_bad), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT(zeCommandListCreate(NULL, dev, &list_desc, &l_bad), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeCommandListCreate(ctx, dev, NULL, &l_bad), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT(zeCommandQueueExecuteCommandLists(NULL, 1, &list, NULL), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeCommandQueueExecuteCommandLists(queue, 1, NULL, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT(zeCommandQueueExecuteCommandLists(queue, 0, &list, NULL), ZE_RESULT_ERROR_INVALID_SIZE);
  EXPECT(zeCommandQueueExecuteCommandLists(queue, 1, &imm, NULL), ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE);
  EXPECT(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence2), ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT);
  EXPECT(zeCommandQueueSynchronize(NULL, 0), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeCommandListAppendMemoryCopy(NULL, hbuf, dbuf, 8, NULL, 0, NULL), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeCommandListAppendMemoryCopy(imm, NULL, dbuf, 8, NULL, 0, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT(zeCommandListAppendMemoryCopy(imm, hbuf, NULL, 8, NULL, 0, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT(zeCommandListAppendMemoryCopy(imm, hbuf, dbuf, 8, NULL, 1, NULL), ZE_RESULT_ERROR_INVALID_SIZE);
  EXPECT(zeCommandListAppendMemoryFill(imm, hbuf, pattern, 3, N, NULL, 0, NULL), ZE_RESULT_ERROR_INVALID_SIZE);
  EXPECT(zeCommandListAppendMemoryFill(imm, hbuf, pattern, 256, N, NULL, 0, NULL), ZE_RESULT_ERROR_INVALID_SIZE);
  EXPECT(zeCommandListAppendMemoryFill(imm, hbuf, NULL, 1, N, NULL, 0, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT(zeCommandListAppendMemoryPrefetch(imm, NULL, 8), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT(zeCommandListAppendMemoryPrefetch(imm, dbuf, 8), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandListAppendMemAdvise(imm, dev, dbuf, 8, (ze_memory_advice_t)99), ZE_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT(zeCommandListAppendMemAdvise(imm, dev, dbuf, 8, ZE_MEMORY_ADVICE_SET_READ_MOSTLY), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandListAppendSignalEvent(imm, NULL), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeCommandListAppendWaitOnEvents(imm, 1, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT(zeCommandListAppendEventReset(imm, NULL), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeEventPoolCreate(NULL, &pool_desc, 0, NULL, &p_bad), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeEventPoolCreate(ctx, NULL, 0, NULL, &p_bad), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  ze_event_pool_desc_t bad_pool = pool_desc;
  bad_pool.count = 0;
  EXPECT(zeEventPoolCreate(ctx, &bad_pool, 0, NULL, &p_bad), ZE_RESULT_ERROR_INVALID_SIZE);
  bad_pool = pool_desc;
  bad_pool.flags = 0x100;
  EXPECT(zeEventPoolCreate(ctx, &bad_pool, 0, NULL, &p_bad), ZE_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT(zeEventPoolCreate(ctx, &pool_desc, 1, NULL, &p_bad), ZE_RESULT_ERROR_INVALID_SIZE);
  ze_ipc_event_pool_handle_t ipc;
  EXPECT(zeEventPoolGetIpcHandle(pool, &ipc), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
  ze_event_desc_t bad_event = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, 16, 0, 0};
  EXPECT(zeEventCreate(pool, &bad_event, &e_bad), ZE_RESULT_ERROR_INVALID_ARGUMENT); /* past the pool */
  bad_event.index = 3;
  EXPECT(zeEventCreate(pool, &bad_event, &e_bad), ZE_RESULT_ERROR_INVALID_ARGUMENT); /* taken */
  bad_event.signal = 0x10;
  EXPECT(zeEventCreate(pool, &bad_event, &e_bad), ZE_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT(zeEventCreate(NULL, &bad_event, &e_bad), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeEventCreate(pool, NULL, &e_bad), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT(zeEventHostSignal(NULL), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeEventHostSynchronize(NULL, 0), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeEventQueryStatus(NULL), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeEventQueryKernelTimestamp(first, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT(zeEventQueryKernelTimestamp(ev[12], &t1), ZE_RESULT_NOT_READY);
  EXPECT(zeFenceCreate(NULL, &fence_desc, &f_bad), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeFenceCreate(queue, NULL, &f_bad), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT(zeFenceHostSynchronize(NULL, 0), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeFenceQueryStatus(NULL), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);

  /* Events of a pool without timestamps have none to give. */
  ze_event_pool_desc_t plain_desc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
  ze_event_pool_handle_t plain = NULL;
  EXPECT(zeEventPoolCreate(ctx, &plain_desc, 0, NULL, &plain), ZE_RESULT_SUCCESS);
  ze_event_handle_t plain_event = make_event(plain, 0);
  EXPECT(zeEventHostSignal(plain_event), ZE_RESULT_SUCCESS);
  EXPECT(zeEventQueryKernelTimestamp(plain_event, &t1), ZE_RESULT_ERROR_INVALID_ARGUMENT);

  /* An event of another context cannot be waited on or signalled here. */
  ze_context_handle_t other = NULL;
  EXPECT(zeContextCreate(driver, &context_desc, &other), ZE_RESULT_SUCCESS);
  ze_event_pool_handle_t other_pool = NULL;
  EXPECT(zeEventPoolCreate(other, &plain_desc, 0, NULL, &other_pool), ZE_RESULT_SUCCESS);
  ze_event_handle_t foreign = make_event(other_pool, 0);
  EXPECT(zeCommandListAppendBarrier(imm, NULL, 1, &foreign), ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT);
  EXPECT(zeCommandListAppendSignalEvent(imm, foreign), ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT);

  /* Destroyed objects are no longer objects. */
  EXPECT(zeEventDestroy(foreign), ZE_RESULT_SUCCESS);
  EXPECT(zeEventQueryStatus(foreign), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeEventDestroy(foreign), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeEventPoolDestroy(other_pool), ZE_RESULT_SUCCESS);
  EXPECT(zeEventCreate(other_pool, &bad_event, &e_bad), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeFenceDestroy(fence2), ZE_RESULT_SUCCESS);
  EXPECT(zeFenceQueryStatus(fence2), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeCommandQueueDestroy(queue2), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandQueueSynchronize(queue2, 0), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeCommandListDestroy(imm2), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandListAppendBarrier(imm2, NULL, 0, NULL), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  /* A freed event slot can be taken again. */
  bad_event.signal = 0;
  bad_event.index = 0;
  EXPECT(zeEventDestroy(ev[0]), ZE_RESULT_SUCCESS);
  EXPECT(zeEventCreate(pool, &bad_event, &ev[0]), ZE_RESULT_SUCCESS);

  EXPECT(zeEventDestroy(plain_event), ZE_RESULT_SUCCESS);
  EXPECT(zeEventPoolDestroy(plain), ZE_RESULT_SUCCESS);
  EXPECT(zeContextDestroy(other), ZE_RESULT_SUCCESS);
  EXPECT(zeFenceDestroy(fence), ZE_RESULT_SUCCESS);
  EXPECT(zeFenceDestroy(fence_on), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandListDestroy(list), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandQueueDestroy(queue), ZE_RESULT_SUCCESS);
  EXPECT(zeCommandListDestroy(imm), ZE_RESULT_SUCCESS);
  for (int i = 0; i < 16; i++) EXPECT(zeEventDestroy(ev[i]), ZE_RESULT_SUCCESS);
  EXPECT(zeEventPoolDestroy(pool), ZE_RESULT_SUCCESS);
  EXPECT(zeContextDestroy(ctx), ZE_RESULT_SUCCESS);
}

int main(void) {
  EXPECT(zeInit(0), ZE_RESULT_SUCCESS);

  uint32_t count = 0;
  EXPECT(zeDriverGet(&count, NULL), ZE_RESULT_SUCCESS);
  CHECK(count == 1);
  if (count != 1) {
    printf("the loader found %u drivers: is ZE_ENABLE_ALT_DRIVERS set?\n", count);
    printf("%d passed, %d failed\n", passed, failed + 1);
    return 1;
  }
  ze_driver_handle_t driver = NULL;
  EXPECT(zeDriverGet(&count, &driver), ZE_RESULT_SUCCESS);
  CHECK(driver != NULL);

  ze_api_version_t version = 0;
  EXPECT(zeDriverGetApiVersion(driver, &version), ZE_RESULT_SUCCESS);
  CHECK(ZE_MAJOR_VERSION(version) == 1);
  ze_driver_properties_t driver_props = {ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES, NULL};
  EXPECT(zeDriverGetProperties(driver, &driver_props), ZE_RESULT_SUCCESS);
  CHECK(driver_props.driverVersion != 0);

  count = 0;
  EXPECT(zeDeviceGet(driver, &count, NULL), ZE_RESULT_SUCCESS);
  CHECK(count == 1);
  ze_device_handle_t dev = NULL;
  count = 1;
  EXPECT(zeDeviceGet(driver, &count, &dev), ZE_RESULT_SUCCESS);
  CHECK(dev != NULL);
  ze_device_properties_t dev_props = {ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, NULL};
  EXPECT(zeDeviceGetProperties(dev, &dev_props), ZE_RESULT_SUCCESS);
  CHECK(dev_props.type == ZE_DEVICE_TYPE_GPU);
  CHECK(dev_props.flags & ZE_DEVICE_PROPERTY_FLAG_INTEGRATED);
  CHECK(strstr(dev_props.name, "host driver") != NULL);
  CHECK(dev_props.maxMemAllocSize > 0 && dev_props.numSubslicesPerSlice > 0);
  printf("device: %s\n", dev_props.name);
  ze_device_compute_properties_t compute = {ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES, NULL};
  EXPECT(zeDeviceGetComputeProperties(dev, &compute), ZE_RESULT_SUCCESS);
  count = 0;
  EXPECT(zeDeviceGetMemoryProperties(dev, &count, NULL), ZE_RESULT_SUCCESS);
  CHECK(count == 1);
  ze_device_memory_properties_t mem_props = {ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES, NULL};
  EXPECT(zeDeviceGetMemoryProperties(dev, &count, &mem_props), ZE_RESULT_SUCCESS);
  CHECK(mem_props.totalSize > 0);
  count = 0;
  EXPECT(zeDeviceGetCommandQueueGroupProperties(dev, &count, NULL), ZE_RESULT_SUCCESS);
  CHECK(count == 1);
  uint64_t host_ts = 0, dev_ts = 0;
  EXPECT(zeDeviceGetGlobalTimestamps(dev, &host_ts, &dev_ts), ZE_RESULT_SUCCESS);

  ze_context_handle_t ctx = NULL;
  EXPECT(zeContextCreate(driver, &context_desc, &ctx), ZE_RESULT_SUCCESS);
  CHECK(ctx != NULL);
  EXPECT(zeContextGetStatus(ctx), ZE_RESULT_SUCCESS);

  /* The three kinds of USM. */
  const size_t size = 12345;
  void *h = NULL, *d = NULL, *s = NULL;
  EXPECT(zeMemAllocHost(ctx, &host_desc, size, 64, &h), ZE_RESULT_SUCCESS);
  EXPECT(zeMemAllocDevice(ctx, &device_desc, size, 0, dev, &d), ZE_RESULT_SUCCESS);
  EXPECT(zeMemAllocShared(ctx, &device_desc, &host_desc, size, 4096, dev, &s), ZE_RESULT_SUCCESS);
  CHECK(h && d && s);
  CHECK(((uintptr_t)h % 64) == 0 && ((uintptr_t)s % 4096) == 0);
  if (h && d && s) {
    check_allocation(ctx, dev, h, size, ZE_MEMORY_TYPE_HOST, 0);
    check_allocation(ctx, dev, d, size, ZE_MEMORY_TYPE_DEVICE, 1);
    check_allocation(ctx, dev, s, size, ZE_MEMORY_TYPE_SHARED, 1);
  }
  /* Memory that is not the driver's: unknown, and no range. */
  int local = 0;
  ze_memory_allocation_properties_t props = {ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES, NULL};
  EXPECT(zeMemGetAllocProperties(ctx, &local, &props, NULL), ZE_RESULT_SUCCESS);
  CHECK(props.type == ZE_MEMORY_TYPE_UNKNOWN);
  void *base = NULL;
  size_t range = 0;
  EXPECT(zeMemGetAddressRange(ctx, &local, &base, &range), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  /* Another context does not know this context's memory. */
  ze_context_handle_t other = NULL;
  EXPECT(zeContextCreate(driver, &context_desc, &other), ZE_RESULT_SUCCESS);
  EXPECT(zeMemGetAllocProperties(other, h, &props, NULL), ZE_RESULT_SUCCESS);
  CHECK(props.type == ZE_MEMORY_TYPE_UNKNOWN);
  EXPECT(zeMemFree(other, h), ZE_RESULT_ERROR_INVALID_ARGUMENT);

  /* Frees: only the exact base, once. */
  EXPECT(zeMemFree(ctx, (char *)h + 1), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT(zeMemFree(ctx, h), ZE_RESULT_SUCCESS);
  EXPECT(zeMemFree(ctx, h), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT(zeMemFree(ctx, d), ZE_RESULT_SUCCESS);
  EXPECT(zeMemGetAddressRange(ctx, d, &base, &range), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  /* s stays allocated: destroying the context frees it. */

  /* Bad input: Level Zero codes, never a crash. */
  void *p = NULL;
  EXPECT(zeContextCreate(NULL, &context_desc, &other), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeContextCreate(driver, NULL, &other), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT(zeContextCreate(driver, &context_desc, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT(zeDeviceGet(NULL, &count, NULL), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeDeviceGet(driver, NULL, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT(zeDeviceGetProperties(NULL, &dev_props), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeDeviceGetProperties(dev, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT(zeDriverGetProperties(NULL, &driver_props), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeMemAllocHost(NULL, &host_desc, 64, 0, &p), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeMemAllocHost(ctx, NULL, 64, 0, &p), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT(zeMemAllocHost(ctx, &host_desc, 64, 0, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT(zeMemAllocHost(ctx, &host_desc, 0, 0, &p), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
  EXPECT(zeMemAllocHost(ctx, &host_desc, 64, 3, &p), ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
  EXPECT(zeMemAllocHost(ctx, &host_desc, SIZE_MAX, 0, &p), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
  EXPECT(zeMemAllocDevice(ctx, &device_desc, 64, 0, NULL, &p), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeMemFree(ctx, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT(zeMemFree(NULL, s), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeMemGetAllocProperties(ctx, s, NULL, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT(zeMemGetAllocProperties(NULL, s, &props, NULL), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeMemGetAddressRange(NULL, s, &base, &range), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeContextDestroy(NULL), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);

  /* What this driver does not do says so. */
  ze_module_desc_t module_desc = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_IL_SPIRV};
  ze_module_handle_t module = NULL;
  EXPECT(zeModuleCreate(ctx, dev, &module_desc, &module, NULL), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);

  EXPECT(zeContextDestroy(other), ZE_RESULT_SUCCESS);
  EXPECT(zeContextDestroy(ctx), ZE_RESULT_SUCCESS);
  /* A destroyed context is no longer a context. */
  EXPECT(zeContextGetStatus(ctx), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT(zeMemAllocHost(ctx, &host_desc, 64, 0, &p), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);

  check_commands(driver, dev);

  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
