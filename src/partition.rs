//! `urDevicePartition` at the C boundary: the partition request decoded and
//! checked once, for every adapter, and the sub-device output protocol.
//!
//! A request is one kind of partition: `EQUALLY` and `BY_AFFINITY_DOMAIN`
//! take exactly one property, `BY_COUNTS` one property per sub-device. What
//! the device supports (which kinds, how many compute units) is the
//! adapter's to check, with [`PartitionRequest::check_against`].

use crate::boundary::slice_arg;
use crate::*;

/// A checked partition request.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PartitionRequest {
    /// Sub-devices of this many compute units each, as many as fit.
    Equally(u32),
    /// One sub-device per count, of that many compute units.
    ByCounts(Vec<u32>),
    /// One sub-device per domain of this kind (one flag bit).
    ByAffinityDomain(ur_device_affinity_domain_flags_t),
}

/// Every affinity-domain flag UR defines.
const AFFINITY_DOMAIN_FLAGS: ur_device_affinity_domain_flags_t = !UR_DEVICE_AFFINITY_DOMAIN_FLAGS_MASK;

impl PartitionRequest {
    /// Decodes `urDevicePartition`'s `pProperties`.
    ///
    /// Null pointers are `INVALID_NULL_POINTER`; an unknown partition type
    /// `INVALID_ENUMERATION`; an empty list, mixed types, several
    /// properties of a single-property type, a zero `EQUALLY` size or an
    /// affinity domain that is not one known flag `INVALID_VALUE`; a zero
    /// count `INVALID_DEVICE_PARTITION_COUNT`.
    ///
    /// # Safety
    /// `p` is null or points at a readable descriptor whose `pProperties`
    /// is null or points at `PropCount` properties.
    pub unsafe fn decode(p: *const ur_device_partition_properties_t) -> UrResult<Self> {
        let desc = p.as_ref().ok_or(UR_RESULT_ERROR_INVALID_NULL_POINTER)?;
        if desc.pProperties.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if desc.PropCount == 0 || desc.PropCount > u32::MAX as usize {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let props = slice_arg(desc.pProperties, desc.PropCount as u32)?;
        let kind = props[0].r#type;
        if ![UR_DEVICE_PARTITION_EQUALLY, UR_DEVICE_PARTITION_BY_COUNTS, UR_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, UR_DEVICE_PARTITION_BY_CSLICE]
            .contains(&kind)
        {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        if props.iter().any(|p| p.r#type != kind) {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        // SAFETY (union reads): every member is a u32; the tag says which
        // one the caller meant.
        match kind {
            UR_DEVICE_PARTITION_BY_COUNTS => {
                let counts: Vec<u32> = props.iter().map(|p| p.value.count).collect();
                if counts.contains(&0) {
                    return Err(UR_RESULT_ERROR_INVALID_DEVICE_PARTITION_COUNT);
                }
                Ok(Self::ByCounts(counts))
            }
            _ if props.len() != 1 => Err(UR_RESULT_ERROR_INVALID_VALUE),
            UR_DEVICE_PARTITION_EQUALLY => match props[0].value.equally {
                0 => Err(UR_RESULT_ERROR_INVALID_VALUE),
                n => Ok(Self::Equally(n)),
            },
            UR_DEVICE_PARTITION_BY_AFFINITY_DOMAIN => {
                let domain = props[0].value.affinity_domain;
                if domain.count_ones() != 1 || domain & !AFFINITY_DOMAIN_FLAGS != 0 {
                    return Err(UR_RESULT_ERROR_INVALID_VALUE);
                }
                Ok(Self::ByAffinityDomain(domain))
            }
            // Compute slices are a Level Zero notion; no device here has them.
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE),
        }
    }

    pub fn kind(&self) -> ur_device_partition_t {
        match self {
            Self::Equally(_) => UR_DEVICE_PARTITION_EQUALLY,
            Self::ByCounts(_) => UR_DEVICE_PARTITION_BY_COUNTS,
            Self::ByAffinityDomain(_) => UR_DEVICE_PARTITION_BY_AFFINITY_DOMAIN,
        }
    }

    /// Checks the request against what a device offers: its supported
    /// kinds, compute units, sub-device limit and affinity domains. An
    /// unsupported kind or domain is `INVALID_VALUE`; counts that sum past
    /// the compute units, or more sub-devices than the limit,
    /// `INVALID_DEVICE_PARTITION_COUNT`; an `EQUALLY` size past the compute
    /// units `DEVICE_PARTITION_FAILED`.
    pub fn check_against(
        &self,
        supported: &[ur_device_partition_t],
        compute_units: u32,
        max_sub_devices: u32,
        affinity_domains: ur_device_affinity_domain_flags_t,
    ) -> UrResult {
        if !supported.contains(&self.kind()) {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        match self {
            Self::Equally(n) if *n > compute_units => Err(UR_RESULT_ERROR_DEVICE_PARTITION_FAILED),
            Self::Equally(_) => Ok(()),
            Self::ByCounts(counts) => {
                let total: u64 = counts.iter().map(|&c| u64::from(c)).sum();
                if total > u64::from(compute_units) || counts.len() > max_sub_devices as usize {
                    return Err(UR_RESULT_ERROR_INVALID_DEVICE_PARTITION_COUNT);
                }
                Ok(())
            }
            Self::ByAffinityDomain(d) if d & affinity_domains == 0 => Err(UR_RESULT_ERROR_INVALID_VALUE),
            Self::ByAffinityDomain(_) => Ok(()),
        }
    }

    /// The request as UR properties, as `UR_DEVICE_INFO_PARTITION_TYPE`
    /// reports it for the sub-devices it made.
    pub fn properties(&self) -> Vec<ur_device_partition_property_t> {
        let property = |r#type, v: u32| ur_device_partition_property_t { r#type, value: ur_device_partition_value_t { count: v } };
        match self {
            Self::Equally(n) => vec![property(UR_DEVICE_PARTITION_EQUALLY, *n)],
            Self::ByCounts(counts) => counts.iter().map(|&c| property(UR_DEVICE_PARTITION_BY_COUNTS, c)).collect(),
            Self::ByAffinityDomain(d) => vec![property(UR_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, *d)],
        }
    }
}

/// Writes sub-device handles in `urDevicePartition`'s protocol: at most
/// `num_devices` into `out` (optional), the number made into `num_ret`
/// (optional). A non-null `out` with `num_devices == 0` is `INVALID_SIZE`,
/// as for every `(count, array)` output.
///
/// # Safety
/// `out` is null or valid for `num_devices` writes; `num_ret` null or valid.
pub unsafe fn write_sub_devices(
    devices: &[ur_device_handle_t],
    num_devices: u32,
    out: *mut ur_device_handle_t,
    num_ret: *mut u32,
) {
    if !out.is_null() {
        for (i, &d) in devices.iter().take(num_devices as usize).enumerate() {
            out.add(i).write(d);
        }
    }
    if !num_ret.is_null() {
        num_ret.write(devices.len() as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prop(t: ur_device_partition_t, v: u32) -> ur_device_partition_property_t {
        ur_device_partition_property_t { r#type: t, value: ur_device_partition_value_t { count: v } }
    }

    fn decode(props: &[ur_device_partition_property_t]) -> UrResult<PartitionRequest> {
        let desc = ur_device_partition_properties_t {
            stype: UR_STRUCTURE_TYPE_DEVICE_PARTITION_PROPERTIES,
            pNext: std::ptr::null_mut(),
            pProperties: props.as_ptr(),
            PropCount: props.len(),
        };
        unsafe { PartitionRequest::decode(&desc) }
    }

    #[test]
    fn decodes_each_kind() {
        assert_eq!(decode(&[prop(UR_DEVICE_PARTITION_EQUALLY, 2)]), Ok(PartitionRequest::Equally(2)));
        assert_eq!(
            decode(&[prop(UR_DEVICE_PARTITION_BY_COUNTS, 1), prop(UR_DEVICE_PARTITION_BY_COUNTS, 3)]),
            Ok(PartitionRequest::ByCounts(vec![1, 3]))
        );
        let numa = UR_DEVICE_AFFINITY_DOMAIN_FLAG_NUMA.0;
        assert_eq!(
            decode(&[prop(UR_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, numa)]),
            Ok(PartitionRequest::ByAffinityDomain(numa))
        );
    }

    #[test]
    fn rejects_malformed_requests() {
        assert_eq!(unsafe { PartitionRequest::decode(std::ptr::null()) }, Err(UR_RESULT_ERROR_INVALID_NULL_POINTER));
        assert_eq!(decode(&[]), Err(UR_RESULT_ERROR_INVALID_VALUE));
        assert_eq!(decode(&[prop(ur_device_partition_t(0x1234), 1)]), Err(UR_RESULT_ERROR_INVALID_ENUMERATION));
        assert_eq!(decode(&[prop(UR_DEVICE_PARTITION_EQUALLY, 0)]), Err(UR_RESULT_ERROR_INVALID_VALUE));
        assert_eq!(
            decode(&[prop(UR_DEVICE_PARTITION_EQUALLY, 1), prop(UR_DEVICE_PARTITION_EQUALLY, 1)]),
            Err(UR_RESULT_ERROR_INVALID_VALUE)
        );
        assert_eq!(
            decode(&[prop(UR_DEVICE_PARTITION_BY_COUNTS, 1), prop(UR_DEVICE_PARTITION_EQUALLY, 1)]),
            Err(UR_RESULT_ERROR_INVALID_VALUE)
        );
        assert_eq!(
            decode(&[prop(UR_DEVICE_PARTITION_BY_COUNTS, 1), prop(UR_DEVICE_PARTITION_BY_COUNTS, 0)]),
            Err(UR_RESULT_ERROR_INVALID_DEVICE_PARTITION_COUNT)
        );
        // Two domains at once, and a bit UR does not define.
        assert_eq!(decode(&[prop(UR_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, 0x3)]), Err(UR_RESULT_ERROR_INVALID_VALUE));
        assert_eq!(decode(&[prop(UR_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, 0x40)]), Err(UR_RESULT_ERROR_INVALID_VALUE));
    }

    #[test]
    fn checks_against_the_device() {
        let all = [UR_DEVICE_PARTITION_EQUALLY, UR_DEVICE_PARTITION_BY_COUNTS];
        let check = |r: PartitionRequest| r.check_against(&all, 4, 4, 0);
        assert_eq!(check(PartitionRequest::Equally(2)), Ok(()));
        assert_eq!(check(PartitionRequest::Equally(5)), Err(UR_RESULT_ERROR_DEVICE_PARTITION_FAILED));
        assert_eq!(check(PartitionRequest::ByCounts(vec![1, 3])), Ok(()));
        assert_eq!(check(PartitionRequest::ByCounts(vec![2, 3])), Err(UR_RESULT_ERROR_INVALID_DEVICE_PARTITION_COUNT));
        assert_eq!(check(PartitionRequest::ByCounts(vec![1; 5])), Err(UR_RESULT_ERROR_INVALID_DEVICE_PARTITION_COUNT));
        assert_eq!(check(PartitionRequest::ByAffinityDomain(1)), Err(UR_RESULT_ERROR_INVALID_VALUE));
    }
}
