/* The host driver (drivers/ze_host) through Debian's Level Zero loader:
 * scripts/level_zero_env.sh points ZE_ENABLE_ALT_DRIVERS at the driver, and
 * this program uses nothing but the loader's ze_api.h entry points.
 * Prints one line per failed check and ends with "N passed, N failed". */
#include <level_zero/ze_api.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

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

  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
