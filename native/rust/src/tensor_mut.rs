//! A tensor a graft may overwrite: a dtype, a shape and the caller's own
//! memory, writable. Compiled with and without the `orch_logging` feature, so
//! that `orch_graft!` type-checks the same way in both builds.

use crate::schema_gen::DType;
use crate::tensor::{Element, ShapeError, Tensor};

/// A writable tensor for [`graft`](crate::graft) and `orch_graft!`: the
/// caller's memory, C-contiguous, with its dtype and shape.
#[derive(Debug)]
pub struct TensorMut<'a> {
    dtype: DType,
    shape: Vec<usize>,
    bytes: &'a mut [u8],
    /// Whether the bytes are in this target's order (a slice of elements)
    /// rather than little-endian (raw bytes): only differs on big-endian
    /// targets.
    native_order: bool,
}

impl<'a> TensorMut<'a> {
    /// A 1-D tensor over a mutable slice.
    pub fn from_slice<T: Element>(values: &'a mut [T]) -> Self {
        let len = values.len();
        // SAFETY: every Element is a primitive number (or half's
        // `repr(transparent)` u16) without padding, for which every bit
        // pattern is a valid value, so its memory may be written as bytes;
        // the exclusive borrow of `values` is moved into the result.
        let bytes =
            unsafe { std::slice::from_raw_parts_mut(values.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(values)) };
        TensorMut { dtype: T::DTYPE, shape: vec![len], bytes, native_order: true }
    }

    /// A tensor over raw little-endian bytes of `dtype` (an f16 buffer kept
    /// as `u16` bits, a host copy of a device tensor); `shape` must account
    /// for every byte.
    pub fn from_bytes(dtype: DType, shape: &[usize], bytes: &'a mut [u8]) -> Result<Self, ShapeError> {
        let len = bytes.len() / dtype.size();
        TensorMut { dtype, shape: vec![len], bytes, native_order: false }.reshaped(shape)
    }

    /// The same memory under another shape with the same number of elements.
    pub fn reshaped(mut self, shape: &[usize]) -> Result<Self, ShapeError> {
        // The check is Tensor's: the same rule as for a log call's shape.
        Tensor::from_bytes(self.dtype, shape, self.bytes)?;
        self.shape = shape.to_vec();
        Ok(self)
    }

    /// A shorter-lived view of the same memory.
    pub fn reborrow(&mut self) -> TensorMut<'_> {
        TensorMut { dtype: self.dtype, shape: self.shape.clone(), bytes: self.bytes, native_order: self.native_order }
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Dimensions, outermost first.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The tensor as a record holds it (little-endian bytes).
    pub fn as_tensor(&self) -> Tensor<'_> {
        let shape = &self.shape;
        let tensor = if self.swaps() {
            let mut bytes = self.bytes.to_vec();
            bytes.chunks_exact_mut(self.dtype.size()).for_each(<[u8]>::reverse);
            Tensor::from_owned_bytes(self.dtype, shape, bytes)
        } else {
            Tensor::from_bytes(self.dtype, shape, self.bytes)
        };
        // The shape was checked against these bytes when it was set.
        tensor.unwrap_or_else(|_| Tensor::from_slice::<u8>(&[]))
    }

    /// Overwrites the memory with little-endian bytes of the same dtype and length.
    #[cfg_attr(not(feature = "orch_logging"), allow(dead_code))]
    pub(crate) fn write_le(&mut self, write: impl FnOnce(&mut [u8])) {
        write(self.bytes);
        if self.swaps() {
            self.bytes.chunks_exact_mut(self.dtype.size()).for_each(<[u8]>::reverse);
        }
    }

    fn swaps(&self) -> bool {
        self.native_order && cfg!(target_endian = "big")
    }
}

/// Anything `orch_graft!` may overwrite: a mutable slice, `Vec` or array of
/// the element types `orch_log!` takes, or a [`TensorMut`].
pub trait AsTensorMut {
    /// The values as a writable tensor over their own memory.
    fn as_tensor_mut(&mut self) -> TensorMut<'_>;
}

impl<T: Element> AsTensorMut for [T] {
    fn as_tensor_mut(&mut self) -> TensorMut<'_> {
        TensorMut::from_slice(self)
    }
}

impl<T: Element> AsTensorMut for Vec<T> {
    fn as_tensor_mut(&mut self) -> TensorMut<'_> {
        TensorMut::from_slice(self)
    }
}

impl<T: Element, const N: usize> AsTensorMut for [T; N] {
    fn as_tensor_mut(&mut self) -> TensorMut<'_> {
        TensorMut::from_slice(self)
    }
}

impl AsTensorMut for TensorMut<'_> {
    fn as_tensor_mut(&mut self) -> TensorMut<'_> {
        self.reborrow()
    }
}

impl<T: AsTensorMut + ?Sized> AsTensorMut for &mut T {
    fn as_tensor_mut(&mut self) -> TensorMut<'_> {
        (**self).as_tensor_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mutable_slice_is_a_writable_1d_tensor_of_its_own_memory() {
        let mut v = vec![1.0f32, -2.0];
        let mut t = v.as_tensor_mut();
        assert_eq!((t.dtype(), t.shape()), (DType::F32, &[2usize][..]));
        assert_eq!(t.as_tensor().bytes(), &[0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]);
        t.write_le(|bytes| bytes.copy_from_slice(&[0, 0, 0, 0x40, 0, 0, 0x40, 0x40]));
        assert_eq!(v, [2.0, 3.0]);
    }

    #[test]
    fn raw_bytes_need_a_shape_that_covers_them() {
        let mut bytes = [0u8; 12];
        assert_eq!(TensorMut::from_bytes(DType::F16, &[2, 3], &mut bytes).unwrap().shape(), &[2, 3]);
        assert!(TensorMut::from_bytes(DType::F16, &[5], &mut bytes).is_err());
        assert!(TensorMut::from_bytes(DType::F32, &[2], &mut bytes).is_err());
    }

    #[test]
    fn a_reference_to_a_mutable_value_is_one() {
        fn shape_of(mut values: impl AsTensorMut) -> Vec<usize> {
            values.as_tensor_mut().reshaped(&[3, 1]).unwrap().shape().to_vec()
        }
        let mut a = [1i32, 2, 3];
        assert_eq!(shape_of(&mut a), [3, 1]);
        assert_eq!(shape_of(&mut &mut a[..]), [3, 1]);
    }
}
