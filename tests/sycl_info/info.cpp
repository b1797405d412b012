// Every information descriptor libsycl offers for platforms, devices and
// contexts, printed one per line as `name = value`, for every platform and
// device libsycl finds. tests/sycl_info/run.sh runs this program on Intel's
// built-in OpenCL adapter and on ours, on the same OpenCL runtime, and diffs
// the two outputs; on native CPU it checks that nothing answers with an
// exception.
//
// Each query runs in its own try block: an exception prints
// `name = EXCEPTION <code> <what()>` and the program goes on. Handles print
// as their position in libsycl's own lists (`<device #k>`), never as
// addresses, so two runs compare line by line.
#include <sycl/sycl.hpp>

#include <algorithm>

#include <link.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace {

namespace exp = sycl::ext::oneapi::experimental;

std::vector<sycl::platform> all_platforms;
std::vector<sycl::device> all_devices;

std::string fmt(const sycl::platform &p) {
  for (size_t i = 0; i < all_platforms.size(); ++i)
    if (all_platforms[i] == p) return "<platform #" + std::to_string(i) + ">";
  return "<platform not listed>";
}
std::string fmt(const sycl::device &d) {
  for (size_t i = 0; i < all_devices.size(); ++i)
    if (all_devices[i] == d) return "<device #" + std::to_string(i) + ">";
  return "<device not listed>";
}
std::string fmt(const std::string &s) { return s; }
std::string fmt(bool b) { return b ? "true" : "false"; }
std::string fmt(float f) {
  std::ostringstream o;
  o << f;
  return o.str();
}
// Aspects print by name, so that a justified difference in one aspect can
// be taken out of the aspects list by name.
std::string fmt(sycl::aspect a) {
  switch (a) {
#define __SYCL_ASPECT(A, ID) \
  case sycl::aspect::A:      \
    return #A;
#define __SYCL_ASPECT_DEPRECATED(A, ID, MSG) __SYCL_ASPECT(A, ID)
#include <sycl/info/aspects.def>
#include <sycl/info/aspects_deprecated.def>
#undef __SYCL_ASPECT_DEPRECATED
#undef __SYCL_ASPECT
  }
  return "aspect_" + std::to_string(static_cast<int>(a));
}
std::string fmt(const sycl::kernel_id &k) { return k.get_name(); }
std::string fmt(const exp::matrix::combination &c) {
  std::ostringstream o;
  o << "{max " << c.max_msize << "x" << c.max_nsize << "x" << c.max_ksize << ", " << c.msize << "x" << c.nsize << "x"
    << c.ksize << ", types " << int(c.atype) << "," << int(c.btype) << "," << int(c.ctype) << "," << int(c.dtype)
    << "}";
  return o.str();
}
template <typename T>
std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool> && !std::is_floating_point_v<T>, std::string>
fmt(T v) {
  return std::to_string(v);
}
// Enumerations print as their number: names would need a table per enum
// and the numbers compare just as well.
template <typename T> std::enable_if_t<std::is_enum_v<T>, std::string> fmt(T v) {
  return std::to_string(static_cast<std::underlying_type_t<T>>(v));
}
template <int N> std::string fmt(const sycl::range<N> &r) {
  std::string s = "{";
  for (int i = 0; i < N; ++i) s += (i ? ", " : "") + std::to_string(r[i]);
  return s + "}";
}
template <int N> std::string fmt(const sycl::id<N> &r) {
  std::string s = "{";
  for (int i = 0; i < N; ++i) s += (i ? ", " : "") + std::to_string(r[i]);
  return s + "}";
}
template <typename T, size_t N> std::string fmt(const std::array<T, N> &a) {
  std::string s = "{";
  for (size_t i = 0; i < N; ++i) s += (i ? ", " : "") + fmt(a[i]);
  return s + "}";
}
template <typename T> std::string fmt(const std::vector<T> &v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + fmt(v[i]);
  return s + "}";
}

void line(const std::string &name, const std::string &value) { std::cout << name << " = " << value << "\n"; }

void failed(const std::string &name, const sycl::exception &e) {
  line(name, "EXCEPTION " + std::to_string(e.code().value()) + " " + e.what());
}

// One query, whatever it throws.
template <typename F> void query(const std::string &name, F &&f) {
  try {
    line(name, f());
  } catch (const sycl::exception &e) {
    failed(name, e);
  } catch (const std::exception &e) {
    line(name, std::string("EXCEPTION std ") + e.what());
  } catch (...) {
    line(name, "EXCEPTION unknown");
  }
}

#define Q(obj, prefix, desc) query((prefix) + #desc, [&] { return fmt(obj.template get_info<desc>()); })

void platform_info(const sycl::platform &p, const std::string &at) {
  using namespace sycl::info::platform;
  std::string pre = at + " ";
  query(pre + "backend", [&] { return fmt(p.get_backend()); });
  Q(p, pre + "sycl::info::platform::", name);
  Q(p, pre + "sycl::info::platform::", vendor);
  Q(p, pre + "sycl::info::platform::", version);
  Q(p, pre + "sycl::info::platform::", profile);
  Q(p, pre + "sycl::info::platform::", extensions);
  query(pre + "get_devices()", [&] { return fmt(p.get_devices()); });
}

void device_info(const sycl::device &d, const std::string &at) {
  std::string pre = at + " sycl::info::device::";
  {
    using namespace sycl::info::device;
    Q(d, pre, device_type);
    Q(d, pre, vendor_id);
    Q(d, pre, max_compute_units);
    Q(d, pre, max_work_item_dimensions);
    Q(d, pre, max_work_item_sizes<1>);
    Q(d, pre, max_work_item_sizes<2>);
    Q(d, pre, max_work_item_sizes<3>);
    Q(d, pre, max_work_group_size);
    Q(d, pre, max_num_sub_groups);
    Q(d, pre, sub_group_sizes);
    Q(d, pre, preferred_vector_width_char);
    Q(d, pre, preferred_vector_width_short);
    Q(d, pre, preferred_vector_width_int);
    Q(d, pre, preferred_vector_width_long);
    Q(d, pre, preferred_vector_width_long_long);
    Q(d, pre, preferred_vector_width_float);
    Q(d, pre, preferred_vector_width_double);
    Q(d, pre, preferred_vector_width_half);
    Q(d, pre, native_vector_width_char);
    Q(d, pre, native_vector_width_short);
    Q(d, pre, native_vector_width_int);
    Q(d, pre, native_vector_width_long);
    Q(d, pre, native_vector_width_long_long);
    Q(d, pre, native_vector_width_float);
    Q(d, pre, native_vector_width_double);
    Q(d, pre, native_vector_width_half);
    Q(d, pre, max_clock_frequency);
    Q(d, pre, address_bits);
    Q(d, pre, max_mem_alloc_size);
    Q(d, pre, max_read_image_args);
    Q(d, pre, max_write_image_args);
    Q(d, pre, image2d_max_width);
    Q(d, pre, image2d_max_height);
    Q(d, pre, image3d_max_width);
    Q(d, pre, image3d_max_height);
    Q(d, pre, image3d_max_depth);
    Q(d, pre, image_max_buffer_size);
    Q(d, pre, max_samplers);
    Q(d, pre, max_parameter_size);
    Q(d, pre, mem_base_addr_align);
    Q(d, pre, half_fp_config);
    Q(d, pre, single_fp_config);
    Q(d, pre, double_fp_config);
    Q(d, pre, global_mem_cache_type);
    Q(d, pre, global_mem_cache_line_size);
    Q(d, pre, global_mem_cache_size);
    Q(d, pre, global_mem_size);
    Q(d, pre, max_constant_buffer_size);
    Q(d, pre, max_constant_args);
    Q(d, pre, local_mem_type);
    Q(d, pre, local_mem_size);
    Q(d, pre, error_correction_support);
    Q(d, pre, host_unified_memory);
    Q(d, pre, atomic_memory_order_capabilities);
    Q(d, pre, atomic_fence_order_capabilities);
    Q(d, pre, atomic_memory_scope_capabilities);
    Q(d, pre, atomic_fence_scope_capabilities);
    Q(d, pre, profiling_timer_resolution);
    Q(d, pre, is_endian_little);
    Q(d, pre, is_available);
    Q(d, pre, is_compiler_available);
    Q(d, pre, is_linker_available);
    Q(d, pre, execution_capabilities);
    Q(d, pre, queue_profiling);
    Q(d, pre, built_in_kernel_ids);
    Q(d, pre, built_in_kernels);
    Q(d, pre, platform);
    Q(d, pre, name);
    Q(d, pre, vendor);
    Q(d, pre, driver_version);
    Q(d, pre, profile);
    Q(d, pre, version);
    Q(d, pre, backend_version);
    Q(d, pre, extensions);
    Q(d, pre, printf_buffer_size);
    Q(d, pre, preferred_interop_user_sync);
    Q(d, pre, partition_max_sub_devices);
    Q(d, pre, partition_properties);
    Q(d, pre, partition_affinity_domains);
    Q(d, pre, partition_type_property);
    Q(d, pre, partition_type_affinity_domain);
    Q(d, pre, parent_device);
    Q(d, pre, aspects);
    Q(d, pre, image_support);
    Q(d, pre, atomic64);
    Q(d, pre, reference_count);
    Q(d, pre, usm_device_allocations);
    Q(d, pre, usm_host_allocations);
    Q(d, pre, usm_shared_allocations);
    Q(d, pre, usm_restricted_shared_allocations);
    Q(d, pre, usm_system_allocations);
    Q(d, pre, image_max_array_size);
    Q(d, pre, opencl_c_version);
    Q(d, pre, sub_group_independent_forward_progress);
    Q(d, pre, ext_oneapi_srgb);
    Q(d, pre, ext_intel_pci_address);
    Q(d, pre, ext_intel_gpu_eu_count);
    Q(d, pre, ext_intel_gpu_eu_simd_width);
    Q(d, pre, ext_intel_gpu_slices);
    Q(d, pre, ext_intel_gpu_subslices_per_slice);
    Q(d, pre, ext_intel_gpu_eu_count_per_subslice);
    Q(d, pre, ext_intel_gpu_hw_threads_per_eu);
    Q(d, pre, ext_intel_device_info_uuid);
    Q(d, pre, ext_intel_max_mem_bandwidth);
    Q(d, pre, ext_oneapi_max_work_groups_1d);
    Q(d, pre, ext_oneapi_max_work_groups_2d);
    Q(d, pre, ext_oneapi_max_work_groups_3d);
    Q(d, pre, ext_oneapi_max_global_work_groups);
    Q(d, pre, ext_oneapi_cuda_cluster_group);
  }
  {
    using namespace sycl::ext::intel::info::device;
    pre = at + " sycl::ext::intel::info::device::";
    Q(d, pre, device_id);
    Q(d, pre, pci_address);
    Q(d, pre, gpu_eu_count);
    Q(d, pre, gpu_eu_simd_width);
    Q(d, pre, gpu_slices);
    Q(d, pre, gpu_subslices_per_slice);
    Q(d, pre, gpu_eu_count_per_subslice);
    Q(d, pre, gpu_hw_threads_per_eu);
    Q(d, pre, max_mem_bandwidth);
    Q(d, pre, uuid);
    Q(d, pre, free_memory);
    Q(d, pre, memory_clock_rate);
    Q(d, pre, memory_bus_width);
    Q(d, pre, max_compute_queue_indices);
    Q(d, pre, current_clock_throttle_reasons);
    Q(d, pre, fan_speed);
    Q(d, pre, min_power_limit);
    Q(d, pre, max_power_limit);
    Q(d, pre, xe_stack_count);
    Q(d, pre, xe_regions_per_stack);
    Q(d, pre, xe_clusters_per_region);
    Q(d, pre, xe_cores_per_cluster);
    Q(d, pre, eus_per_xe_core);
    Q(d, pre, max_lanes_per_hw_thread);
    Q(d, pre, luid);
    Q(d, pre, node_mask);
  }
  {
    using sycl::ext::intel::esimd::info::device::has_2d_block_io_support;
    pre = at + " sycl::ext::intel::esimd::info::device::";
    Q(d, pre, has_2d_block_io_support);
    using sycl::ext::oneapi::info::device::num_compute_units;
    pre = at + " sycl::ext::oneapi::info::device::";
    Q(d, pre, num_compute_units);
    using sycl::ext::codeplay::experimental::info::device::max_registers_per_work_group;
    pre = at + " sycl::ext::codeplay::experimental::info::device::";
    Q(d, pre, max_registers_per_work_group);
  }
  {
    using namespace sycl::ext::oneapi::experimental::info::device;
    using scope = sycl::ext::oneapi::experimental::execution_scope;
    pre = at + " sycl::ext::oneapi::experimental::info::device::";
    Q(d, pre, image_row_pitch_align);
    Q(d, pre, max_image_linear_row_pitch);
    Q(d, pre, max_image_linear_width);
    Q(d, pre, max_image_linear_height);
    Q(d, pre, mipmap_max_anisotropy);
    Q(d, pre, component_devices);
    Q(d, pre, composite_device);
    Q(d, pre, architecture);
    Q(d, pre, work_group_progress_capabilities<scope::root_group>);
    Q(d, pre, sub_group_progress_capabilities<scope::work_group>);
    Q(d, pre, sub_group_progress_capabilities<scope::root_group>);
    Q(d, pre, work_item_progress_capabilities<scope::sub_group>);
    Q(d, pre, work_item_progress_capabilities<scope::work_group>);
    Q(d, pre, work_item_progress_capabilities<scope::root_group>);
    Q(d, pre, max_global_work_groups);
    Q(d, pre, max_work_groups<1>);
    Q(d, pre, max_work_groups<2>);
    Q(d, pre, max_work_groups<3>);
    Q(d, pre, matrix_combinations);
  }

  pre = at + " has(aspect::";
#define __SYCL_ASPECT(A, ID) query(pre + #A ")", [&] { return fmt(d.has(sycl::aspect::A)); });
#define __SYCL_ASPECT_DEPRECATED(A, ID, MSG) __SYCL_ASPECT(A, ID)
#include <sycl/info/aspects.def>
#include <sycl/info/aspects_deprecated.def>
#undef __SYCL_ASPECT_DEPRECATED
#undef __SYCL_ASPECT
}

void context_info(const sycl::context &c, const std::string &at) {
  using namespace sycl::info::context;
  std::string pre = at + " sycl::info::context::";
  Q(c, pre, reference_count);
  Q(c, pre, platform);
  Q(c, pre, devices);
  Q(c, pre, atomic_memory_order_capabilities);
  Q(c, pre, atomic_memory_scope_capabilities);
  Q(c, pre, atomic_fence_order_capabilities);
  Q(c, pre, atomic_fence_scope_capabilities);
}

}  // namespace

int main() {
  try {
    all_platforms = sycl::platform::get_platforms();
    for (auto &p : all_platforms)
      for (auto &d : p.get_devices()) all_devices.push_back(d);
  } catch (const sycl::exception &e) {
    failed("platforms", e);
    return 1;
  }
  // Which adapter libraries the process holds goes to stderr (the diffed
  // output is stdout): run.sh checks it against the adapter it meant.
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *) {
        std::string name = info->dlpi_name ? info->dlpi_name : "";
        if (name.find("libur_adapter") != std::string::npos) std::fprintf(stderr, "adapter library: %s\n", name.c_str());
        return 0;
      },
      nullptr);
  line("platforms", std::to_string(all_platforms.size()));
  line("devices", std::to_string(all_devices.size()));

  size_t k = 0;
  for (size_t i = 0; i < all_platforms.size(); ++i) {
    const auto &p = all_platforms[i];
    std::string at = "[platform " + std::to_string(i) + "]";
    platform_info(p, at);
    std::vector<sycl::device> devices;
    try {
      devices = p.get_devices();
    } catch (const sycl::exception &e) {
      failed(at + " get_devices", e);
    }
    for (auto &d : devices) {
      std::string dev_at = "[device " + std::to_string(k++) + "]";
      device_info(d, dev_at);
      // Sub-devices of one compute unit each, then by counts {1}, where the
      // device offers the partition: described like any device.
      using pp = sycl::info::partition_property;
      std::vector<pp> kinds;
      try {
        kinds = d.get_info<sycl::info::device::partition_properties>();
      } catch (const sycl::exception &e) {
        failed(dev_at + " partition_properties", e);
      }
      auto has = [&](pp kind) { return std::find(kinds.begin(), kinds.end(), kind) != kinds.end(); };
      auto describe = [&](const std::vector<sycl::device> &subs, const std::string &how) {
        line(dev_at + how + " count", std::to_string(subs.size()));
        for (size_t j = 0; j < subs.size(); ++j) {
          all_devices.push_back(subs[j]);
          device_info(subs[j], dev_at + how + "[sub-device " + std::to_string(j) + "]");
        }
      };
      try {
        if (has(pp::partition_equally)) describe(d.create_sub_devices<pp::partition_equally>(1), "[equally 1]");
      } catch (const sycl::exception &e) {
        failed(dev_at + "[equally 1] create_sub_devices", e);
      }
      try {
        if (has(pp::partition_by_counts))
          describe(d.create_sub_devices<pp::partition_by_counts>(std::vector<size_t>{1}), "[by counts {1}]");
      } catch (const sycl::exception &e) {
        failed(dev_at + "[by counts {1}] create_sub_devices", e);
      }
    }
    try {
      // A context of all the platform's devices, and one of each device.
      if (!devices.empty()) context_info(sycl::context(devices), at + "[context of all devices]");
      for (size_t j = 0; j < devices.size(); ++j)
        context_info(sycl::context(devices[j]), at + "[context of device " + std::to_string(j) + "]");
    } catch (const sycl::exception &e) {
      failed(at + " context", e);
    }
  }
  std::cout.flush();
  return 0;
}
