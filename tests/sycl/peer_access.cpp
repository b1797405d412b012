// Peer access (sycl_ext_oneapi_peer_access) between the devices of one
// platform: libsycl asks the adapter through urUsmP2P*Exp for every pair of
// two different devices, and answers a device about itself on its own.
//
// The program asks for two devices where the backend can make them
// (UR_NATIVE_CPU_DEVICES=2, POCL_DEVICES="pthread pthread"), unless the
// caller chose otherwise; a platform with one device checks the device
// about itself only, and says so.
#include "check.hpp"

#include <cstdlib>
#include <string>
#include <vector>

int main() {
  setenv("UR_NATIVE_CPU_DEVICES", "2", 0);
  setenv("POCL_DEVICES", "pthread pthread", 0);
  sycl::device dev{sycl::default_selector_v};
  std::vector<sycl::device> devices = dev.get_platform().get_devices();
  using sycl::ext::oneapi::peer_access;

  section("a device and itself", [&] {
    check(dev.ext_oneapi_can_access_peer(dev, peer_access::access_supported),
          "can_access_peer(self, access_supported)");
    check(dev.ext_oneapi_can_access_peer(dev, peer_access::atomics_supported),
          "can_access_peer(self, atomics_supported)");
  });

  if (devices.size() < 2) {
    std::printf("NOTE the platform has %zu device: pairs of devices not checked\n", devices.size());
    return suite::summary();
  }

  for (size_t i = 0; i < devices.size(); ++i) {
    sycl::device a = devices[i];
    const sycl::device &b = devices[(i + 1) % devices.size()];
    const std::string pair = "device " + std::to_string(i) + " -> " + std::to_string((i + 1) % devices.size());
    section(pair, [&] {
      bool access = a.ext_oneapi_can_access_peer(b, peer_access::access_supported);
      bool atomics = a.ext_oneapi_can_access_peer(b, peer_access::atomics_supported);
      check(access || !atomics, pair + ": atomics only with access");
      if (!access) {
        check(throws_sycl([&] { a.ext_oneapi_enable_peer_access(b); }),
              pair + ": enable_peer_access throws where can_access_peer says no");
        std::printf("NOTE %s: no peer access on this platform\n", pair.c_str());
        return;
      }
      a.ext_oneapi_enable_peer_access(b);
      check(throws_sycl([&] { a.ext_oneapi_enable_peer_access(b); }), pair + ": a second enable_peer_access throws");
      a.ext_oneapi_disable_peer_access(b);
      check(true, pair + ": enable then disable");
    });
  }
  return suite::summary();
}
