//! Entry points of initialisation, the driver and its device.

use super::*;

const INIT_FLAGS: ze_init_flags_t = ZE_INIT_FLAG_GPU_ONLY | ZE_INIT_FLAG_VPU_ONLY;

entry! {
    fn zeInit(flags: ze_init_flags_t) {
        if flags & !INIT_FLAGS != 0 {
            return Err(ZE_RESULT_ERROR_INVALID_ENUMERATION);
        }
        // Our device is a GPU: asked for VPUs only, this driver has nothing.
        if flags == ZE_INIT_FLAG_VPU_ONLY {
            return Err(ZE_RESULT_ERROR_UNINITIALIZED);
        }
        INITIALIZED.store(true, Ordering::Release);
        Ok(())
    }

    fn zeDriverGet(count: *mut u32, drivers: *mut ze_driver_handle_t) {
        initialized()?;
        fill_list(count, drivers, &[driver_handle()])
    }

    fn zeDriverGetApiVersion(h: ze_driver_handle_t, version: *mut ze_api_version_t) {
        check_driver(h)?;
        *out(version)? = API_VERSION;
        Ok(())
    }

    fn zeDriverGetProperties(h: ze_driver_handle_t, props: *mut ze_driver_properties_t) {
        check_driver(h)?;
        let p = out(props)?;
        p.uuid.id = DRIVER_UUID;
        p.driverVersion = DRIVER_VERSION;
        Ok(())
    }

    fn zeDriverGetIpcProperties(h: ze_driver_handle_t, props: *mut ze_driver_ipc_properties_t) {
        check_driver(h)?;
        out(props)?.flags = 0; // no IPC
        Ok(())
    }

    fn zeDriverGetExtensionProperties(h: ze_driver_handle_t, count: *mut u32, _props: *mut c_void) {
        check_driver(h)?;
        *out(count)? = 0; // no extensions
        Ok(())
    }

    fn zeDeviceGet(h: ze_driver_handle_t, count: *mut u32, devices: *mut ze_device_handle_t) {
        check_driver(h)?;
        fill_list(count, devices, &[device_handle()])
    }

    fn zeDeviceGetSubDevices(h: ze_device_handle_t, count: *mut u32, _devices: *mut ze_device_handle_t) {
        check_device(h)?;
        *out(count)? = 0;
        Ok(())
    }

    fn zeDeviceGetProperties(h: ze_device_handle_t, props: *mut ze_device_properties_t) {
        check_device(h)?;
        let p = out(props)?;
        let (cpu, mhz) = cpu_model();
        p.r#type = ZE_DEVICE_TYPE_GPU;
        p.vendorId = VENDOR_ID;
        p.deviceId = 0;
        // It shares the host's memory, as an integrated GPU does.
        p.flags = ZE_DEVICE_PROPERTY_FLAG_INTEGRATED;
        p.subdeviceId = 0;
        p.coreClockRate = mhz;
        p.maxMemAllocSize = host_memory_bytes();
        p.maxHardwareContexts = 1;
        p.maxCommandQueuePriority = 0;
        // Each host core counts as one execution unit of one lane.
        p.numThreadsPerEU = 1;
        p.physicalEUSimdWidth = 1;
        p.numEUsPerSubslice = 1;
        p.numSubslicesPerSlice = cpu_count();
        p.numSlices = 1;
        // Timestamps are nanoseconds; the 1.2 struct asks for ticks per second.
        p.timerResolution = if p.stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 { 1_000_000_000 } else { 1 };
        p.timestampValidBits = 64;
        p.kernelTimestampValidBits = 64;
        p.uuid.id = DEVICE_UUID;
        write_name(&mut p.name, &format!("Level Zero host driver ({cpu})"));
        Ok(())
    }

    fn zeDeviceGetComputeProperties(h: ze_device_handle_t, props: *mut ze_device_compute_properties_t) {
        check_device(h)?;
        let p = out(props)?;
        // No kernels run here: the smallest limits a device may state.
        p.maxTotalGroupSize = 1;
        p.maxGroupSizeX = 1;
        p.maxGroupSizeY = 1;
        p.maxGroupSizeZ = 1;
        p.maxGroupCountX = 1;
        p.maxGroupCountY = 1;
        p.maxGroupCountZ = 1;
        p.maxSharedLocalMemory = 0;
        p.numSubGroupSizes = 1;
        p.subGroupSizes = [1, 0, 0, 0, 0, 0, 0, 0];
        Ok(())
    }

    fn zeDeviceGetCommandQueueGroupProperties(
        h: ze_device_handle_t,
        count: *mut u32,
        props: *mut ze_command_queue_group_properties_t,
    ) {
        check_device(h)?;
        let count = out(count)?;
        if *count == 0 || props.is_null() {
            *count = 1;
            return Ok(());
        }
        *count = 1;
        let p = out(props)?;
        p.flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
        p.maxMemoryFillPatternSize = MAX_FILL_PATTERN;
        p.numQueues = 1;
        Ok(())
    }

    fn zeDeviceGetMemoryProperties(h: ze_device_handle_t, count: *mut u32, props: *mut ze_device_memory_properties_t) {
        check_device(h)?;
        let count = out(count)?;
        if *count == 0 || props.is_null() {
            *count = 1;
            return Ok(());
        }
        *count = 1;
        let p = out(props)?;
        p.flags = 0;
        p.maxClockRate = 0;
        p.maxBusWidth = 0;
        p.totalSize = host_memory_bytes();
        write_name(&mut p.name, "host memory");
        Ok(())
    }

    fn zeDeviceGetMemoryAccessProperties(h: ze_device_handle_t, props: *mut ze_device_memory_access_properties_t) {
        check_device(h)?;
        let p = out(props)?;
        // All memory is host memory: every kind is reachable, atomically and
        // concurrently, from the host and the "device" alike.
        let all = ZE_MEMORY_ACCESS_CAP_FLAG_RW
            | ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC
            | ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT
            | ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT_ATOMIC;
        p.hostAllocCapabilities = all;
        p.deviceAllocCapabilities = all;
        p.sharedSingleDeviceAllocCapabilities = all;
        p.sharedCrossDeviceAllocCapabilities = 0; // one device only
        p.sharedSystemAllocCapabilities = 0; // plain malloc memory is not offered
        Ok(())
    }

    fn zeDeviceGetCacheProperties(h: ze_device_handle_t, count: *mut u32, _props: *mut c_void) {
        check_device(h)?;
        *out(count)? = 0; // no device-managed caches
        Ok(())
    }

    fn zeDeviceCanAccessPeer(h: ze_device_handle_t, peer: ze_device_handle_t, value: *mut ze_bool_t) {
        check_device(h)?;
        check_device(peer)?;
        *out(value)? = 1;
        Ok(())
    }

    fn zeDeviceGetStatus(h: ze_device_handle_t) {
        check_device(h)
    }

    fn zeDeviceGetGlobalTimestamps(h: ze_device_handle_t, host: *mut u64, device: *mut u64) {
        check_device(h)?;
        let (host, device) = (out(host)?, out(device)?);
        let now = driver::now_ns();
        *host = now;
        *device = now;
        Ok(())
    }
}
