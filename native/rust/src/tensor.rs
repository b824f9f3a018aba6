//! A tensor as a record holds it: a dtype, a shape and its raw bytes,
//! C-contiguous and little-endian (the bytes blake3 covers).

use std::borrow::Cow;
use std::fmt;

use crate::schema_gen::DType;

/// An element type the schema knows: `f32`, `f64`, `i8`, `u8`, `i32`, `i64`,
/// and with the `half` feature (on with `orch_logging`) `half::f16` and
/// `half::bf16`.
pub trait Element: Copy + 'static + sealed::Sealed {
    /// The schema dtype of this element type.
    const DTYPE: DType;
    /// The element's little-endian bytes, appended to `out`.
    #[doc(hidden)]
    fn extend_le_bytes(self, out: &mut Vec<u8>);
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! element {
    ($($(#[$attr:meta])* $t:ty => $dtype:ident, $to_bits:expr;)*) => {$(
        $(#[$attr])*
        impl sealed::Sealed for $t {}
        $(#[$attr])*
        impl Element for $t {
            const DTYPE: DType = DType::$dtype;
            fn extend_le_bytes(self, out: &mut Vec<u8>) {
                let to_bits: fn($t) -> _ = $to_bits;
                out.extend_from_slice(&to_bits(self).to_le_bytes());
            }
        }
        $(#[$attr])*
        impl AsTensor for $t {
            fn as_tensor(&self) -> Tensor<'_> {
                Tensor::from_slice(std::slice::from_ref(self)).scalar()
            }
        }
    )*};
}

element! {
    f32 => F32, f32::to_bits;
    f64 => F64, f64::to_bits;
    i8 => I8, |v| v;
    u8 => U8, |v| v;
    i32 => I32, |v| v;
    i64 => I64, |v| v;
    #[cfg(feature = "half")]
    #[cfg_attr(docsrs, doc(cfg(feature = "half")))]
    half::f16 => F16, half::f16::to_bits;
    #[cfg(feature = "half")]
    #[cfg_attr(docsrs, doc(cfg(feature = "half")))]
    half::bf16 => Bf16, half::bf16::to_bits;
}

/// The raw bytes of a slice of elements, little-endian.
fn le_bytes<T: Element>(values: &[T]) -> Cow<'_, [u8]> {
    if cfg!(target_endian = "little") {
        // SAFETY: every Element is a primitive number (or half's
        // `repr(transparent)` u16) without padding, so its memory is
        // `size_of_val` initialised bytes, already in little-endian order on
        // this target; u8 has alignment 1, and the borrow keeps `values` alive.
        let bytes = unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values)) };
        Cow::Borrowed(bytes)
    } else {
        let mut out = Vec::with_capacity(std::mem::size_of_val(values));
        values.iter().for_each(|v| v.extend_le_bytes(&mut out));
        Cow::Owned(out)
    }
}

/// Why values and a shape do not make a tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeError {
    shape: Vec<usize>,
    numel: Option<usize>,
    dtype: DType,
    bytes: usize,
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.numel {
            Some(n) => write!(
                f,
                "shape {:?} holds {} {} elements ({} bytes) but {} bytes were given",
                self.shape,
                n,
                self.dtype.name(),
                n.saturating_mul(self.dtype.size()),
                self.bytes
            ),
            None => write!(f, "shape {:?} has more elements than memory can hold", self.shape),
        }
    }
}

impl std::error::Error for ShapeError {}

/// A tensor ready to be recorded: dtype, shape (outermost first) and the
/// C-contiguous little-endian bytes, borrowed from the caller when they are
/// already laid out that way.
#[derive(Clone, Debug)]
pub struct Tensor<'a> {
    dtype: DType,
    shape: Vec<i64>,
    bytes: Cow<'a, [u8]>,
}

impl<'a> Tensor<'a> {
    /// A 1-D tensor over a slice.
    pub fn from_slice<T: Element>(values: &'a [T]) -> Self {
        Tensor { dtype: T::DTYPE, shape: vec![values.len() as i64], bytes: le_bytes(values) }
    }

    /// A tensor over raw little-endian bytes of `dtype`, e.g. a buffer copied
    /// from a device; `shape` must account for every byte.
    pub fn from_bytes(dtype: DType, shape: &[usize], bytes: &'a [u8]) -> Result<Self, ShapeError> {
        Tensor { dtype, shape: vec![(bytes.len() / dtype.size()) as i64], bytes: Cow::Borrowed(bytes) }.reshaped(shape)
    }

    pub(crate) fn from_owned_bytes(
        dtype: DType,
        shape: &[usize],
        bytes: Vec<u8>,
    ) -> Result<Tensor<'static>, ShapeError> {
        Tensor { dtype, shape: Vec::new(), bytes: Cow::Owned(bytes) }.reshaped(shape)
    }

    /// The same bytes under another shape with the same number of elements.
    pub fn reshaped(mut self, shape: &[usize]) -> Result<Self, ShapeError> {
        let numel = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        let fits = numel.and_then(|n| n.checked_mul(self.dtype.size())) == Some(self.bytes.len());
        if !fits || shape.iter().any(|&d| i64::try_from(d).is_err()) {
            return Err(ShapeError { shape: shape.to_vec(), numel, dtype: self.dtype, bytes: self.bytes.len() });
        }
        self.shape = shape.iter().map(|&d| d as i64).collect();
        Ok(self)
    }

    /// A one-element tensor as a 0-d scalar (shape `[]`).
    fn scalar(mut self) -> Self {
        self.shape.clear();
        self
    }

    /// A view of this tensor that borrows its bytes.
    pub fn borrowed(&self) -> Tensor<'_> {
        Tensor { dtype: self.dtype, shape: self.shape.clone(), bytes: Cow::Borrowed(&self.bytes) }
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Dimensions, outermost first, as the record writes them.
    pub fn shape(&self) -> &[i64] {
        &self.shape
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.bytes.len() / self.dtype.size()
    }

    /// The C-contiguous little-endian bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// Anything `orch_log!` accepts as values.
pub trait AsTensor {
    /// The values as a tensor, borrowing when the layout allows it.
    fn as_tensor(&self) -> Tensor<'_>;
}

impl<T: Element> AsTensor for [T] {
    fn as_tensor(&self) -> Tensor<'_> {
        Tensor::from_slice(self)
    }
}

impl<T: Element> AsTensor for Vec<T> {
    fn as_tensor(&self) -> Tensor<'_> {
        Tensor::from_slice(self)
    }
}

impl<T: Element, const N: usize> AsTensor for [T; N] {
    fn as_tensor(&self) -> Tensor<'_> {
        Tensor::from_slice(self)
    }
}

impl AsTensor for Tensor<'_> {
    fn as_tensor(&self) -> Tensor<'_> {
        self.borrowed()
    }
}

impl<T: AsTensor + ?Sized> AsTensor for &T {
    fn as_tensor(&self) -> Tensor<'_> {
        (**self).as_tensor()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slice_is_a_1d_tensor_of_its_little_endian_bytes() {
        let t = [1.0f32, -2.0].as_tensor();
        assert_eq!((t.dtype(), t.shape(), t.numel()), (DType::F32, &[2i64][..], 2));
        assert_eq!(t.bytes(), &[0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]);
    }

    #[test]
    fn every_element_type_maps_to_its_dtype() {
        assert_eq!(vec![1u8].as_tensor().dtype(), DType::U8);
        assert_eq!([1i8].as_tensor().dtype(), DType::I8);
        assert_eq!([1i32].as_tensor().dtype(), DType::I32);
        assert_eq!([1i64].as_tensor().dtype(), DType::I64);
        assert_eq!([1f64].as_tensor().dtype(), DType::F64);
    }

    #[cfg(feature = "half")]
    #[test]
    fn half_elements_are_f16_and_bf16() {
        assert_eq!([half::f16::ONE].as_tensor().bytes(), &[0x00, 0x3c]);
        assert_eq!([half::bf16::ONE].as_tensor().bytes(), &[0x80, 0x3f]);
    }

    #[test]
    fn a_scalar_is_a_0d_tensor() {
        let t = 3i64.as_tensor();
        assert_eq!((t.shape(), t.numel()), (&[][..], 1));
    }

    #[test]
    fn references_to_values_are_values() {
        let v = vec![1i32, 2, 3];
        let r = &&v;
        assert_eq!(r.as_tensor().numel(), 3);
    }

    #[test]
    fn reshaping_keeps_the_bytes_and_checks_the_element_count() {
        let v = [0u8; 6];
        assert_eq!(v.as_tensor().reshaped(&[2, 3]).unwrap().shape(), &[2, 3]);
        assert_eq!(
            v.as_tensor().reshaped(&[2, 0, 3]).err().unwrap().to_string(),
            "shape [2, 0, 3] holds 0 u8 elements (0 bytes) but 6 bytes were given"
        );
        assert!(v.as_tensor().reshaped(&[usize::MAX, 2]).is_err());
    }

    #[test]
    fn raw_bytes_need_a_shape_that_covers_them() {
        assert_eq!(Tensor::from_bytes(DType::F16, &[2], &[0; 4]).unwrap().numel(), 2);
        assert!(Tensor::from_bytes(DType::F16, &[2], &[0; 5]).is_err());
        assert!(Tensor::from_bytes(DType::F32, &[1], &[0; 2]).is_err());
    }
}
