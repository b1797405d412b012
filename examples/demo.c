/*
 * A tour of the Unified Runtime C API, written against <ur_api.h> only.
 *
 * It initialises the loader, lists every adapter, platform and device by name,
 * then on the first device it finds: creates a context and an in-order queue,
 * allocates device, shared and host USM, fills the device allocation, copies
 * it to shared and then to host memory with events chaining the three
 * commands, waits, checks every byte, and releases everything in reverse.
 * Any failing call stops it with a non-zero exit status.
 *
 * The same source builds against this project's header and, unchanged,
 * against the reference UR 0.12 header (which needs <stdbool.h> included
 * first in C):
 *   gcc -I include examples/demo.c -L target/release -l:libur_loader.so.0
 *   gcc -include stdbool.h -I .deps/reference/include/unified-runtime \
 *       examples/demo.c -L target/release -l:libur_loader.so.0
 * Run with LD_LIBRARY_PATH=target/release.
 */
#include <ur_api.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Stops the program when a UR call fails, naming the call and its code. */
#define CHECK(call)                                                          \
  do {                                                                       \
    ur_result_t check_result_ = (call);                                      \
    if (check_result_ != UR_RESULT_SUCCESS) {                                \
      fprintf(stderr, "demo: %s failed with ur_result_t %d (line %d)\n",     \
              #call, (int)check_result_, __LINE__);                          \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

#define FAIL(...)                                                            \
  do {                                                                       \
    fprintf(stderr, "demo: " __VA_ARGS__);                                   \
    fputc('\n', stderr);                                                     \
    exit(1);                                                                 \
  } while (0)

enum { MAX_HANDLES = 64, NAME_LENGTH = 256 };

/* The number of elements the demo moves around, and the pattern it writes. */
static const size_t ELEMENTS = 1 << 16;
static const uint32_t PATTERN = 0xC0FFEE42u;

static const char *backend_name(ur_backend_t backend) {
  switch (backend) {
  case UR_BACKEND_LEVEL_ZERO: return "Level Zero";
  case UR_BACKEND_OPENCL: return "OpenCL";
  case UR_BACKEND_CUDA: return "CUDA";
  case UR_BACKEND_HIP: return "HIP";
  case UR_BACKEND_NATIVE_CPU: return "native CPU";
  default: return "unknown";
  }
}

static const char *device_type_name(ur_device_type_t type) {
  switch (type) {
  case UR_DEVICE_TYPE_CPU: return "CPU";
  case UR_DEVICE_TYPE_GPU: return "GPU";
  case UR_DEVICE_TYPE_FPGA: return "FPGA";
  case UR_DEVICE_TYPE_MCA: return "MCA";
  case UR_DEVICE_TYPE_VPU: return "VPU";
  default: return "other";
  }
}

/* The two-step count-then-fill protocol every UR list query uses. */
static uint32_t get_platforms(ur_adapter_handle_t adapter, ur_platform_handle_t *out) {
  uint32_t count = 0;
  CHECK(urPlatformGet(adapter, 0, NULL, &count));
  if (count > MAX_HANDLES) count = MAX_HANDLES;
  if (count > 0) CHECK(urPlatformGet(adapter, count, out, NULL));
  return count;
}

static uint32_t get_devices(ur_platform_handle_t platform, ur_device_handle_t *out) {
  uint32_t count = 0;
  ur_result_t result = urDeviceGet(platform, UR_DEVICE_TYPE_ALL, 0, NULL, &count);
  /* A platform with no device may say so with DEVICE_NOT_FOUND. */
  if (result == UR_RESULT_ERROR_DEVICE_NOT_FOUND) return 0;
  CHECK(result);
  if (count > MAX_HANDLES) count = MAX_HANDLES;
  if (count > 0) CHECK(urDeviceGet(platform, UR_DEVICE_TYPE_ALL, count, out, NULL));
  return count;
}

static void event_must_be_complete(ur_event_handle_t event, const char *what) {
  ur_event_status_t status;
  CHECK(urEventGetInfo(event, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof(status), &status, NULL));
  if (status != UR_EVENT_STATUS_COMPLETE)
    FAIL("the %s event is not complete after urEventWait (status %d)", what, (int)status);
}

static void verify(const uint32_t *data, const char *what) {
  for (size_t i = 0; i < ELEMENTS; i++) {
    if (data[i] != PATTERN)
      FAIL("%s memory holds 0x%08x at element %zu, expected 0x%08x", what, data[i], i, PATTERN);
  }
  printf("  verified %zu elements of %s memory\n", ELEMENTS, what);
}

int main(void) {
  CHECK(urLoaderInit(0, NULL));
  printf("loader initialised\n");

  ur_adapter_handle_t adapters[MAX_HANDLES];
  uint32_t adapter_count = 0;
  CHECK(urAdapterGet(0, NULL, &adapter_count));
  if (adapter_count > MAX_HANDLES) adapter_count = MAX_HANDLES;
  if (adapter_count > 0) CHECK(urAdapterGet(adapter_count, adapters, NULL));
  printf("%u adapter(s)\n", adapter_count);

  /* Every device found, with the platform it came from; the first one runs
   * the demo. Devices are released at the end. */
  ur_device_handle_t devices[MAX_HANDLES];
  uint32_t device_total = 0;
  ur_device_handle_t chosen = NULL;

  for (uint32_t a = 0; a < adapter_count; a++) {
    ur_backend_t backend;
    CHECK(urAdapterGetInfo(adapters[a], UR_ADAPTER_INFO_BACKEND, sizeof(backend), &backend, NULL));
    ur_platform_handle_t platforms[MAX_HANDLES];
    uint32_t platform_count = get_platforms(adapters[a], platforms);
    printf("adapter %u: %s backend, %u platform(s)\n", a, backend_name(backend), platform_count);

    for (uint32_t p = 0; p < platform_count; p++) {
      char name[NAME_LENGTH];
      CHECK(urPlatformGetInfo(platforms[p], UR_PLATFORM_INFO_NAME, sizeof(name), name, NULL));
      ur_device_handle_t found[MAX_HANDLES];
      uint32_t device_count = get_devices(platforms[p], found);
      printf("  platform %u: %s, %u device(s)\n", p, name, device_count);

      for (uint32_t d = 0; d < device_count; d++) {
        char device_name[NAME_LENGTH];
        ur_device_type_t type;
        CHECK(urDeviceGetInfo(found[d], UR_DEVICE_INFO_NAME, sizeof(device_name), device_name, NULL));
        CHECK(urDeviceGetInfo(found[d], UR_DEVICE_INFO_TYPE, sizeof(type), &type, NULL));
        printf("    device %u: %s (%s)\n", d, device_name, device_type_name(type));
        if (device_total < MAX_HANDLES) {
          devices[device_total++] = found[d];
          if (chosen == NULL) chosen = found[d];
        } else {
          CHECK(urDeviceRelease(found[d]));
        }
      }
    }
  }
  if (chosen == NULL) FAIL("no device found: nothing to run the demo on");

  char chosen_name[NAME_LENGTH];
  CHECK(urDeviceGetInfo(chosen, UR_DEVICE_INFO_NAME, sizeof(chosen_name), chosen_name, NULL));
  printf("running on %s\n", chosen_name);

  ur_context_handle_t context;
  CHECK(urContextCreate(1, &chosen, NULL, &context));
  printf("  context created\n");

  /* No UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE: commands run in order. */
  ur_queue_properties_t queue_properties = {
      .stype = UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, .pNext = NULL, .flags = 0};
  ur_queue_handle_t queue;
  CHECK(urQueueCreate(context, chosen, &queue_properties, &queue));
  printf("  in-order queue created\n");

  const size_t bytes = ELEMENTS * sizeof(uint32_t);
  ur_usm_desc_t usm_desc = {.stype = UR_STRUCTURE_TYPE_USM_DESC, .pNext = NULL, .hints = 0, .align = 0};
  void *device_mem = NULL, *shared_mem = NULL, *host_mem = NULL;
  CHECK(urUSMDeviceAlloc(context, chosen, &usm_desc, NULL, bytes, &device_mem));
  CHECK(urUSMSharedAlloc(context, chosen, &usm_desc, NULL, bytes, &shared_mem));
  CHECK(urUSMHostAlloc(context, &usm_desc, NULL, bytes, &host_mem));
  printf("  allocated %zu bytes each of device, shared and host USM\n", bytes);

  /* Clear the destinations on the host, so that a copy that did not happen
   * cannot pass the check by accident. */
  memset(shared_mem, 0, bytes);
  memset(host_mem, 0, bytes);

  ur_event_handle_t filled, to_shared, to_host;
  CHECK(urEnqueueUSMFill(queue, device_mem, sizeof(PATTERN), &PATTERN, bytes, 0, NULL, &filled));
  CHECK(urEnqueueUSMMemcpy(queue, false, shared_mem, device_mem, bytes, 1, &filled, &to_shared));
  CHECK(urEnqueueUSMMemcpy(queue, false, host_mem, shared_mem, bytes, 1, &to_shared, &to_host));
  printf("  enqueued fill -> copy to shared -> copy to host, each waiting on the last\n");

  CHECK(urEventWait(1, &to_host));
  event_must_be_complete(filled, "fill");
  event_must_be_complete(to_shared, "copy to shared");
  event_must_be_complete(to_host, "copy to host");
  printf("  all three commands complete\n");

  verify(shared_mem, "shared");
  verify(host_mem, "host");

  CHECK(urQueueFinish(queue));
  CHECK(urEventRelease(filled));
  CHECK(urEventRelease(to_shared));
  CHECK(urEventRelease(to_host));
  CHECK(urUSMFree(context, device_mem));
  CHECK(urUSMFree(context, shared_mem));
  CHECK(urUSMFree(context, host_mem));
  CHECK(urQueueRelease(queue));
  CHECK(urContextRelease(context));
  for (uint32_t d = 0; d < device_total; d++) CHECK(urDeviceRelease(devices[d]));
  for (uint32_t a = 0; a < adapter_count; a++) CHECK(urAdapterRelease(adapters[a]));
  printf("  released everything\n");

  CHECK(urLoaderTearDown());
  printf("loader torn down: demo passed\n");
  return 0;
}
