//! Extraction helpers shared by the wrappers.

use std::borrow::Cow;

use numpy::{Element, PyReadonlyArray1};
use pyo3::exceptions::{PyOverflowError, PyUnicodeEncodeError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyString;

use super::errors::{extraction_error, not_unicode};
use crate::chain::{self, FixedWidthInt};

/// Extracts argument `arg` as `T`, failing with the project's exceptions (see
/// [`extraction_error`]).
pub(crate) fn argument<'a, 'py, T>(obj: &'a Bound<'py, PyAny>, arg: &str) -> PyResult<T>
where
    T: FromPyObject<'a, 'py>,
{
    obj.extract::<T>()
        .map_err(|err| extraction_error(obj.py(), arg, err.into()))
}

/// A Python int of any size. Ints wider than 128 bits are kept as `None` instead of failing
/// extraction with `OverflowError`, so that every out-of-range int raises the same
/// `NativeInputError` as the pure-Python reference does.
pub(crate) struct WideInt(Option<i128>);

impl WideInt {
    /// The value narrowed to its field's width.
    pub(crate) fn checked<T: FixedWidthInt>(&self, field: &str) -> PyResult<T> {
        Ok(chain::checked_int(field, self.0)?)
    }
}

impl<'py> FromPyObject<'_, 'py> for WideInt {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        match obj.extract::<i128>() {
            Ok(value) => Ok(Self(Some(value))),
            Err(err) if err.is_instance_of::<PyOverflowError>(obj.py()) => Ok(Self(None)),
            Err(err) => Err(err),
        }
    }
}

/// The UTF-8 of a Python str, borrowed from the str object itself (no copy for ASCII), and
/// usable with the GIL released.
pub(crate) fn utf8(field: &str, s: Bound<'_, PyString>) -> PyResult<PyBackedStr> {
    let py = s.py();
    PyBackedStr::try_from(s).map_err(|err| {
        if err.is_instance_of::<PyUnicodeEncodeError>(py) {
            not_unicode(py, field, err)
        } else {
            err
        }
    })
}

/// The elements of a borrowed 1-d array: the array's own memory when it is contiguous (no copy),
/// else an owned copy in logical order (a strided or reversed view).
///
/// The borrow stays registered with numpy's borrow checker for as long as `array` lives, which
/// rust-numpy documents as valid across `py.detach`.
pub(crate) fn elements<'a, T: Element + Copy>(array: &'a PyReadonlyArray1<'_, T>) -> Cow<'a, [T]> {
    match array.as_slice() {
        Ok(slice) => Cow::Borrowed(slice),
        Err(_) => Cow::Owned(array.as_array().iter().copied().collect()),
    }
}
