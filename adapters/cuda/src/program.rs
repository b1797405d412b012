//! Programs: PTX or cubin images, one per device, loaded into the device's
//! primary context by `urProgramBuild` (the driver JIT-compiles PTX). A
//! program is the core's [`Program`]; [`ProgramCu`] keeps the images and
//! the build's state.

use crate::context::Context;
use crate::device::Device;
use crate::conv::CuExt;
use crate::driver::{self, Module};
use crate::Cuda;
use std::ffi::{c_void, CStr};
use std::sync::{Arc, Mutex};
use ur_core::boundary::NativeOwnership;
use ur_core::handle::arc_of;
use ur_core::program::RawProgram;
use ur_core::info::InfoOut;
use ur_core::*;

/// What a binary is, judged by its first bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ImageKind {
    Ptx,
    Cubin,
    Fatbin,
    /// A module the user loaded and handed over as a native handle: there
    /// are no image bytes.
    Loaded,
}

impl ImageKind {
    pub fn detect(bytes: &[u8]) -> Option<ImageKind> {
        if bytes.starts_with(b"\x7fELF") {
            return Some(ImageKind::Cubin);
        }
        if bytes.starts_with(&0xba55_ed50u32.to_le_bytes()) {
            return Some(ImageKind::Fatbin);
        }
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(64 * 1024)]);
        (text.contains(".version") && text.contains(".target")).then_some(ImageKind::Ptx)
    }
}

/// The kernel names a PTX image declares (`.entry name`).
pub fn ptx_entries(ptx: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(ptx);
    let mut names = Vec::new();
    for piece in text.split(".entry").skip(1) {
        let name: String = piece
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
            .collect();
        if !name.is_empty() {
            names.push(name);
        }
    }
    names
}

struct BuildState {
    status: ur_program_build_status_t,
    options: String,
    log: String,
    /// One module per device, in the order of `ProgramCu::images`.
    modules: Vec<Arc<Module>>,
}

/// One device's image.
pub struct Image {
    pub device: Arc<Device>,
    pub bytes: Vec<u8>,
    pub kind: ImageKind,
}

/// A program of this adapter: the core's, with [`ProgramCu`] as its raw
/// part.
pub type Program = ur_core::program::Program<Cuda>;

/// What a program keeps beside the core's part: its images and the build.
pub struct ProgramCu {
    pub images: Vec<Image>,
    build: Mutex<BuildState>,
}

impl ProgramCu {
    fn state(&self) -> std::sync::MutexGuard<'_, BuildState> {
        self.build.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One module per image, in order, and the number of PTX compiles; the
    /// JIT's logs go to `log`.
    fn load_images(&self, log: &mut String) -> UrResult<(Vec<Arc<Module>>, usize)> {
        // (image, cubin) of each target compiled so far.
        let mut compiled: Vec<(&Image, Vec<u8>)> = Vec::new();
        let mut modules = Vec::with_capacity(self.images.len());
        for image in &self.images {
            image.device.raw.activate()?;
            let loaded = if image.kind == ImageKind::Ptx {
                // The GPU first: comparing the PTX itself costs its length.
                let same_target = |done: &Image| {
                    done.device.raw.props.compute_capability == image.device.raw.props.compute_capability
                        && done.device.raw.props.name == image.device.raw.props.name
                        && done.bytes == image.bytes
                };
                let at = match compiled.iter().position(|(done, _)| same_target(done)) {
                    Some(at) => at,
                    None => {
                        let ptx = driver::nul_terminated(&image.bytes);
                        let (cubin, info) = driver::compile_ptx(&ptx).map_err(|(e, error)| {
                            log.push_str(&error);
                            crate::conv::cu_error(e)
                        })?;
                        log.push_str(&info);
                        compiled.push((image, cubin));
                        compiled.len() - 1
                    }
                };
                Module::load(&compiled[at].1)
            } else {
                Module::load(&image.bytes)
            };
            match loaded {
                Ok((m, info)) => {
                    log.push_str(&info);
                    modules.push(Arc::new(m));
                }
                Err((e, error)) => {
                    log.push_str(&error);
                    return Err(crate::conv::cu_error(e));
                }
            }
        }
        Ok((modules, compiled.len()))
    }

    /// The module loaded for `device`; `INVALID_PROGRAM_EXECUTABLE` before a
    /// successful build.
    pub fn module_for(&self, device: &Device) -> UrResult<Arc<Module>> {
        let state = self.state();
        if state.status != UR_PROGRAM_BUILD_STATUS_SUCCESS {
            return Err(UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE);
        }
        let i = self
            .images
            .iter()
            .position(|im| std::ptr::eq(&*im.device, device))
            .ok_or(UR_RESULT_ERROR_INVALID_DEVICE)?;
        Ok(state.modules[i].clone())
    }

    /// Every `(device, module)` pair of a built program.
    pub fn modules(&self) -> UrResult<Vec<(Arc<Device>, Arc<Module>)>> {
        let state = self.state();
        if state.status != UR_PROGRAM_BUILD_STATUS_SUCCESS {
            return Err(UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE);
        }
        Ok(self
            .images
            .iter()
            .map(|im| im.device.clone())
            .zip(state.modules.iter().cloned())
            .collect())
    }

    fn kernel_names(&self) -> UrResult<Vec<String>> {
        let image = self.images.first().ok_or(UR_RESULT_ERROR_INVALID_PROGRAM)?;
        if image.kind != ImageKind::Ptx {
            return Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
        }
        Ok(ptx_entries(&image.bytes))
    }

    /// The kernel names, once the first device's module is loaded (the
    /// program must have been built).
    fn loaded_kernel_names(&self) -> UrResult<Vec<String>> {
        let first = self.images.first().ok_or(UR_RESULT_ERROR_INVALID_PROGRAM)?;
        self.module_for(&first.device)?;
        self.kernel_names()
    }
}

/// Build options as the driver's JIT log records them.
fn options_str(options: &CStr) -> UrResult<&str> {
    options.to_str().map_err(|_| UR_RESULT_ERROR_INVALID_VALUE)
}

impl RawProgram<Cuda> for ProgramCu {
    fn has_device(program: &Program, device: &Device) -> bool {
        program.raw.images.iter().any(|im| std::ptr::eq(&*im.device, device))
    }

    /// `urProgramCreateWithBinary`: every image must be PTX, a cubin or a
    /// fatbin, for a device of the context.
    ///
    /// PTX, cubin or fatbin images, one per device.
    fn create_with_binary(context: &Context, images: &[(&Device, &[u8])]) -> UrResult<Arc<Program>> {
        let binaries: Vec<(Arc<Device>, Vec<u8>)> =
            images.iter().map(|(d, bytes)| (arc_of(*d), bytes.to_vec())).collect();
        let context = arc_of(context);
        let mut images = Vec::with_capacity(binaries.len());
        for (device, bytes) in binaries {
            if !context.has_device(&device) {
                return Err(UR_RESULT_ERROR_INVALID_DEVICE);
            }
            let kind = ImageKind::detect(&bytes).ok_or(UR_RESULT_ERROR_INVALID_NATIVE_BINARY)?;
            images.push(Image {
                device,
                bytes,
                kind,
            });
        }
        let raw = ProgramCu {
            images,
            build: Mutex::new(BuildState {
                status: UR_PROGRAM_BUILD_STATUS_NONE,
                options: String::new(),
                log: String::new(),
                modules: Vec::new(),
            }),
        };
        Ok(Program::new(context, raw))
    }

    /// `urProgramBuild`: loads every image. PTX is compiled once per
    /// target: images of the same PTX for GPUs of one name and compute
    /// capability share one cubin, compiled on the first of them and loaded
    /// on each. Every build logs its count ([`ur_core::log::build_note`]).
    /// Options are kept for the build info; the driver's JIT takes none
    /// from UR.
    ///
    /// The driver loads every image; the devices named change nothing.
    fn build(program: &Program, _devices: &[&Device], options: &CStr) -> UrResult {
        let raw = &program.raw;
        let options = options_str(options)?;
        let mut state = raw.state();
        if state.status == UR_PROGRAM_BUILD_STATUS_SUCCESS {
            return Err(UR_RESULT_ERROR_INVALID_OPERATION);
        }
        state.options = options.to_string();
        let mut log = String::new();
        match raw.load_images(&mut log) {
            Ok((modules, compiles)) => {
                ur_core::log::build_note(compiles, raw.images.len());
                state.log = log;
                state.modules = modules;
                state.status = UR_PROGRAM_BUILD_STATUS_SUCCESS;
                Ok(())
            }
            Err(e) => {
                state.log = log;
                state.status = UR_PROGRAM_BUILD_STATUS_ERROR;
                Err(e)
            }
        }
    }

    /// `urProgramGetInfo`; the core answers the reference count, the
    /// context and the binaries before it asks here.
    fn info(program: &Program, prop: ur_program_info_t, out: InfoOut) -> UrResult {
        let raw = &program.raw;
        match prop {
            UR_PROGRAM_INFO_NUM_DEVICES => out.value(raw.images.len() as u32),
            UR_PROGRAM_INFO_DEVICES => out.slice(
                &raw
                    .images
                    .iter()
                    .map(|im| im.device.handle())
                    .collect::<Vec<_>>(),
            ),
            UR_PROGRAM_INFO_IL => out.bytes(&[]),
            UR_PROGRAM_INFO_BINARY_SIZES => out.slice(
                &raw
                    .images
                    .iter()
                    .map(|im| im.bytes.len())
                    .collect::<Vec<_>>(),
            ),
            UR_PROGRAM_INFO_NUM_KERNELS => out.value(raw.loaded_kernel_names()?.len()),
            UR_PROGRAM_INFO_KERNEL_NAMES => out.string(&raw.loaded_kernel_names()?.join(";")),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }

    fn binaries(program: &Program) -> UrResult<Vec<Vec<u8>>> {
        Ok(program.raw.images.iter().map(|im| im.bytes.clone()).collect())
    }

    /// `urProgramGetBuildInfo`.
    fn build_info(
        program: &Program,
        device: &Device,
        prop: ur_program_build_info_t,
        out: InfoOut,
    ) -> UrResult {
        if !program
            .raw
            .images
            .iter()
            .any(|im| std::ptr::eq(&*im.device, device))
        {
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
        let state = program.raw.state();
        match prop {
            UR_PROGRAM_BUILD_INFO_STATUS => out.value(state.status),
            UR_PROGRAM_BUILD_INFO_OPTIONS => out.string(&state.options),
            UR_PROGRAM_BUILD_INFO_LOG => out.string(&state.log),
            UR_PROGRAM_BUILD_INFO_BINARY_TYPE => {
                out.value(if state.status == UR_PROGRAM_BUILD_STATUS_SUCCESS {
                    UR_PROGRAM_BINARY_TYPE_EXECUTABLE
                } else {
                    UR_PROGRAM_BINARY_TYPE_NONE
                })
            }
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }

    /// `urProgramGetGlobalVariablePointer`.
    fn global_variable(program: &Program, device: &Device, name: &CStr) -> UrResult<(*mut c_void, usize)> {
        let module = program.raw.module_for(device)?;
        device.raw.activate()?;
        match module.global(name) {
            Ok((p, size)) => Ok((p as usize as *mut c_void, size)),
            Err(driver::CUresult::CUDA_ERROR_NOT_FOUND) => Err(UR_RESULT_ERROR_INVALID_VALUE),
            Err(e) => Err(e).cu(),
        }
    }

    /// The module of the program's first device.
    fn native_handle(program: &Program) -> UrResult<ur_native_handle_t> {
        let raw = &program.raw;
        let first = raw.images.first().ok_or(UR_RESULT_ERROR_INVALID_PROGRAM)?;
        Ok(raw.module_for(&first.device)?.raw() as ur_native_handle_t)
    }

    /// `urProgramCreateWithNativeHandle`: a built program over the user's
    /// loaded module. CUDA does not say which context a module was loaded
    /// in: it is taken to be the primary context of the context's device
    /// that is current on the calling thread, else of its only device
    /// (`INVALID_CONTEXT` when neither tells). Owned, the module is
    /// unloaded with the program; borrowed, it is left to its owner.
    fn from_native(native: ur_native_handle_t, context: &Context, ownership: NativeOwnership) -> UrResult<Arc<Program>> {
        let context = arc_of(context);
        let native = native as driver::CUmodule;
        let current = driver::current_context().cu()?;
        let mut device = None;
        for d in &context.devices {
            if !current.is_null() && d.raw.primary_context()? == current {
                device = Some(d.clone());
                break;
            }
        }
        let device = match (device, context.devices.as_slice()) {
            (Some(d), _) => d,
            (None, [only]) => only.clone(),
            (None, _) => return Err(UR_RESULT_ERROR_INVALID_CONTEXT),
        };
        let owned = ownership == ur_core::boundary::NativeOwnership::Owned;
        let raw = ProgramCu {
            images: vec![Image {
                device,
                bytes: Vec::new(),
                kind: ImageKind::Loaded,
            }],
            build: Mutex::new(BuildState {
                status: UR_PROGRAM_BUILD_STATUS_SUCCESS,
                options: String::new(),
                log: String::new(),
                modules: vec![Arc::new(Module::from_raw(native, owned))],
            }),
        };
        Ok(Program::new(context, raw))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &[u8] = b".version 7.0\n.target sm_50\n.address_size 64\n.visible .entry fill_u32(\n.param .u64 p)\n{ ret; }\n.entry other_k() { ret; }\n";

    #[test]
    fn image_kinds() {
        assert_eq!(ImageKind::detect(PTX), Some(ImageKind::Ptx));
        assert_eq!(
            ImageKind::detect(b"\x7fELF\x02\x01"),
            Some(ImageKind::Cubin)
        );
        assert_eq!(ImageKind::detect(b"not a binary"), None);
    }

    #[test]
    fn entries_of_a_ptx_image() {
        assert_eq!(
            ptx_entries(PTX),
            vec!["fill_u32".to_string(), "other_k".to_string()]
        );
    }
}
