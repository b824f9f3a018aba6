//! `orch_log!` accepts `ndarray` arrays (feature `ndarray`): the record gets
//! the array's shape, and its elements in C order whatever the array's
//! strides, as the format asks.

use ndarray::{ArrayBase, Data, Dimension};

use crate::tensor::{AsTensor, Element, Tensor};

impl<A: Element, S: Data<Elem = A>, D: Dimension> AsTensor for ArrayBase<S, D> {
    fn as_tensor(&self) -> Tensor<'_> {
        let shape = self.shape();
        let tensor = match self.as_slice() {
            Some(contiguous) => Tensor::from_slice(contiguous).reshaped(shape),
            None => {
                // Transposed, sliced or broadcast views: copy in logical order.
                let mut bytes = Vec::with_capacity(self.len() * A::DTYPE.size());
                self.iter().for_each(|v| v.extend_le_bytes(&mut bytes));
                Tensor::from_owned_bytes(A::DTYPE, shape, bytes)
            }
        };
        // The element count always matches the array's own shape.
        tensor.unwrap_or_else(|_| Tensor::from_slice::<A>(&[]))
    }
}

#[cfg(test)]
mod tests {
    use ndarray::{array, s, Array3};

    use super::*;

    #[test]
    fn a_standard_layout_array_is_borrowed_with_its_shape() {
        let a = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let t = a.as_tensor();
        assert_eq!(t.shape(), &[2, 3]);
        assert_eq!(t.bytes().as_ptr(), a.as_ptr().cast::<u8>());
    }

    #[test]
    fn a_transposed_array_is_written_in_c_order() {
        let a = array![[1i32, 2, 3], [4, 5, 6]];
        let transposed = a.t();
        let t = transposed.as_tensor();
        assert_eq!(t.shape(), &[3, 2]);
        let expected: Vec<u8> = [1i32, 4, 2, 5, 3, 6].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(t.bytes(), &expected[..]);
    }

    #[test]
    fn a_strided_slice_and_a_0d_array_keep_their_shapes() {
        let a = Array3::<u8>::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 12 + j * 4 + k) as u8);
        let strided = a.slice(s![.., 1, ..;2]);
        let t = strided.as_tensor();
        assert_eq!((t.shape(), t.bytes()), (&[2i64, 2][..], &[4u8, 6, 16, 18][..]));
        assert_eq!(ndarray::arr0(7i64).as_tensor().shape(), &[] as &[i64]);
    }
}
