//! CUDA's virtual memory management for engine pools of device memory: an
//! address range reserved with `cuMemAddressReserve`, granules of physical
//! memory made with `cuMemCreate`, mapped with `cuMemMap`, opened to the
//! device with `cuMemSetAccess`, and given back with `cuMemUnmap`; the
//! granule is `cuMemGetAllocationGranularity`'s minimum (2 MiB on current
//! GPUs).
//!
//! These entry points are looked up here, once, rather than through
//! `driver::SYMBOLS`: a driver without them (or a device without virtual
//! memory management) leaves pools on slabs from `cuMemAlloc` instead of
//! failing to load.
//!
//! Each granule is its own physical allocation, mapped on its own, so that
//! any granule can be unmapped alone. The allocation handle is released
//! right after mapping: the mapping keeps the memory until it is unmapped.

use crate::driver::{self, Attr, CUdevice, CUdeviceptr, CUresult};
use cudarc::driver::sys;
use std::ffi::c_ulonglong;
use std::sync::{Mutex, OnceLock};

type AddressReserve = unsafe extern "C" fn(*mut CUdeviceptr, usize, usize, CUdeviceptr, c_ulonglong) -> CUresult;
type AddressFree = unsafe extern "C" fn(CUdeviceptr, usize) -> CUresult;
type Create =
    unsafe extern "C" fn(*mut sys::CUmemGenericAllocationHandle, usize, *const sys::CUmemAllocationProp, c_ulonglong) -> CUresult;
type Release = unsafe extern "C" fn(sys::CUmemGenericAllocationHandle) -> CUresult;
type Map = unsafe extern "C" fn(CUdeviceptr, usize, usize, sys::CUmemGenericAllocationHandle, c_ulonglong) -> CUresult;
type Unmap = unsafe extern "C" fn(CUdeviceptr, usize) -> CUresult;
type SetAccess = unsafe extern "C" fn(CUdeviceptr, usize, *const sys::CUmemAccessDesc, usize) -> CUresult;
type Granularity = unsafe extern "C" fn(
    *mut usize,
    *const sys::CUmemAllocationProp,
    sys::CUmemAllocationGranularity_flags,
) -> CUresult;

/// The driver's virtual memory entry points.
struct Vmm {
    reserve: AddressReserve,
    free: AddressFree,
    create: Create,
    release: Release,
    map: Map,
    unmap: Unmap,
    set_access: SetAccess,
    granularity: Granularity,
}

/// The entry points, when the driver has them all.
fn vmm() -> Option<&'static Vmm> {
    static VMM: OnceLock<Option<Vmm>> = OnceLock::new();
    VMM.get_or_init(|| {
        driver::load().ok()?;
        // SAFETY: `load` found the library; only dlsym here, and each symbol
        // gets the signature of its declaration in cuda.h.
        unsafe {
            let lib = sys::culib();
            Some(Vmm {
                reserve: *lib.get::<AddressReserve>(b"cuMemAddressReserve\0").ok()?,
                free: *lib.get::<AddressFree>(b"cuMemAddressFree\0").ok()?,
                create: *lib.get::<Create>(b"cuMemCreate\0").ok()?,
                release: *lib.get::<Release>(b"cuMemRelease\0").ok()?,
                map: *lib.get::<Map>(b"cuMemMap\0").ok()?,
                unmap: *lib.get::<Unmap>(b"cuMemUnmap\0").ok()?,
                set_access: *lib.get::<SetAccess>(b"cuMemSetAccess\0").ok()?,
                granularity: *lib.get::<Granularity>(b"cuMemGetAllocationGranularity\0").ok()?,
            })
        }
    })
    .as_ref()
}

fn check(r: CUresult) -> Result<(), CUresult> {
    if r == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(r)
    }
}

fn location(dev: CUdevice) -> sys::CUmemLocation {
    // SAFETY: a plain C struct; zero is a valid bit pattern for every field.
    let mut l: sys::CUmemLocation = unsafe { std::mem::zeroed() };
    l.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    l.id = dev;
    l
}

/// Pinned device memory of `dev`, with no handle to share.
fn device_prop(dev: CUdevice) -> sys::CUmemAllocationProp {
    // SAFETY: as above; the zeroed flags ask for nothing special.
    let mut p: sys::CUmemAllocationProp = unsafe { std::mem::zeroed() };
    p.type_ = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
    p.requestedHandleTypes = sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE;
    p.location = location(dev);
    p
}

/// The granule of `dev`'s device memory, when the driver and the device
/// support virtual memory management; asked once per device.
pub fn granule(dev: CUdevice) -> Option<usize> {
    static GRANULES: Mutex<Vec<(CUdevice, Option<usize>)>> = Mutex::new(Vec::new());
    let mut known = GRANULES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&(_, g)) = known.iter().find(|(d, _)| *d == dev) {
        return g;
    }
    let g = (|| {
        let vmm = vmm()?;
        if driver::device_attribute(dev, Attr::CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED).ok()? != 1 {
            return None;
        }
        let mut g = 0usize;
        let prop = device_prop(dev);
        // SAFETY: one out value and a valid property struct.
        check(unsafe {
            (vmm.granularity)(
                &mut g,
                &prop,
                sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
            )
        })
        .ok()?;
        g.is_power_of_two().then_some(g)
    })();
    known.push((dev, g));
    g
}

/// Reserves `size` bytes of address space aligned to `align`. The device's
/// context must be current.
pub fn reserve(size: usize, align: usize) -> Result<CUdeviceptr, CUresult> {
    let vmm = vmm().ok_or(CUresult::CUDA_ERROR_NOT_SUPPORTED)?;
    let mut p: CUdeviceptr = 0;
    // SAFETY: one out pointer; no fixed address asked for.
    check(unsafe { (vmm.reserve)(&mut p, size, align, 0, 0) })?;
    Ok(p)
}

/// Gives back a reservation.
///
/// # Safety
/// `(p, size)` came from one [`reserve`] and nothing in it is mapped.
pub unsafe fn unreserve(p: CUdeviceptr, size: usize) {
    if let Some(vmm) = vmm() {
        let _ = (vmm.free)(p, size);
    }
}

/// Puts `dev`'s memory behind `[p, p + len)`, one physical allocation of
/// `granule` bytes per granule, readable and writable by each of
/// `readers` (`dev` and the peers that may touch it: a mapping, unlike
/// `cuMemAlloc` memory, is open to no other device until it is granted,
/// not even for a copy). On error nothing in the range stays mapped. The
/// device's context must be current.
///
/// # Safety
/// The range lies in a reservation, is a multiple of `granule` (the
/// device's), and nothing in it is mapped.
pub unsafe fn commit(
    dev: CUdevice,
    readers: &[CUdevice],
    p: CUdeviceptr,
    len: usize,
    granule: usize,
) -> Result<(), CUresult> {
    let vmm = vmm().ok_or(CUresult::CUDA_ERROR_NOT_SUPPORTED)?;
    let prop = device_prop(dev);
    let access: Vec<sys::CUmemAccessDesc> = readers
        .iter()
        .map(|&reader| sys::CUmemAccessDesc {
            location: location(reader),
            flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        })
        .collect();
    let mut done = 0;
    let result = (|| {
        while done < len {
            let at = p + done as CUdeviceptr;
            let mut handle: sys::CUmemGenericAllocationHandle = 0;
            check((vmm.create)(&mut handle, granule, &prop, 0))?;
            let mapped = check((vmm.map)(at, granule, 0, handle, 0));
            // The mapping (if any) keeps the memory; the handle is not needed.
            let _ = (vmm.release)(handle);
            mapped?;
            if let Err(e) = check((vmm.set_access)(at, granule, access.as_ptr(), access.len())) {
                let _ = (vmm.unmap)(at, granule);
                return Err(e);
            }
            done += granule;
        }
        Ok(())
    })();
    if result.is_err() {
        decommit(p, done, granule);
    }
    result
}

/// Unmaps `[p, p + len)`, granule by granule, which frees their memory.
///
/// # Safety
/// Every granule of the range was mapped by [`commit`] and no command can
/// still touch it.
pub unsafe fn decommit(p: CUdeviceptr, len: usize, granule: usize) {
    let Some(vmm) = vmm() else { return };
    let mut off = 0;
    while off < len {
        let _ = (vmm.unmap)(p + off as CUdeviceptr, granule);
        off += granule;
    }
}
