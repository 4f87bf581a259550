//! The exceptions of the native core, and the one place where Rust errors and failed extractions
//! become them.
//!
//! Both subclass the built-in exception that Python code would raise for the same mistake, so a
//! caller may catch either. Every message starts with the field it is about.

use pyo3::create_exception;
use pyo3::exceptions::{PyAttributeError, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::errors::{ChainError, RankError};

create_exception!(
    tutor_memory.native._core,
    NativeInputError,
    PyValueError,
    "A value the native core cannot take: out of its field's range, NaN, of the wrong length."
);
create_exception!(
    tutor_memory.native._core,
    NativeTypeError,
    PyTypeError,
    "An argument, or an attribute of one, of the wrong type, or missing."
);

impl From<ChainError> for PyErr {
    fn from(err: ChainError) -> Self {
        NativeInputError::new_err(err.to_string())
    }
}

impl From<RankError> for PyErr {
    fn from(err: RankError) -> Self {
        NativeInputError::new_err(err.to_string())
    }
}

/// How pyo3's `#[derive(FromPyObject)]` reports a field it could not extract (a `TypeError`
/// whose cause is the field's own error); `_reference.py` relies on the same shape.
const DERIVE_FIELD_FAILURE: &str = "failed to extract field ";

/// The project's exception for a failed extraction of `arg`.
///
/// pyo3's derive wraps a field's error in one `TypeError` per level of nesting; these are
/// unwound into the path of the field (`check.predicted_mastery`), and the innermost error says
/// what was wrong with it: a wrong type or a missing attribute becomes [`NativeTypeError`], a
/// number too large for a float [`NativeInputError`]. The message is `"{path}: {reason}"`, with
/// the argument's own name as the path when the argument itself was wrong; the original error is
/// kept as the cause. Anything else (say, a `MemoryError` raised by a property) propagates as it
/// was raised.
pub(crate) fn extraction_error(py: Python<'_>, arg: &str, err: PyErr) -> PyErr {
    let mut path: Vec<String> = Vec::new();
    let mut err = err;
    while err.get_type(py).is(py.get_type::<PyTypeError>()) {
        let message = err.value(py).to_string();
        let field = message
            .strip_prefix(DERIVE_FIELD_FAILURE)
            .and_then(|qualified| qualified.rsplit_once('.'))
            .map(|(_, field)| field.to_owned());
        match (field, err.cause(py)) {
            (Some(field), Some(cause)) => {
                path.push(field);
                err = cause;
            }
            _ => break,
        }
    }
    let location = if path.is_empty() {
        arg.to_owned()
    } else {
        path.join(".")
    };
    let message = format!("{location}: {}", err.value(py));
    let native =
        if err.is_instance_of::<PyTypeError>(py) || err.is_instance_of::<PyAttributeError>(py) {
            NativeTypeError::new_err(message)
        } else if err.is_instance_of::<PyOverflowError>(py) {
            NativeInputError::new_err(message)
        } else {
            return err;
        };
    native.set_cause(py, Some(err));
    native
}

/// `err` with `prefix` before its message, when it is one of the core's own exceptions: how an
/// error about one item of a sequence says which item (`episodes[3]: seq must be ...`).
pub(crate) fn in_item(py: Python<'_>, prefix: &str, err: PyErr) -> PyErr {
    let message = format!("{prefix}: {}", err.value(py));
    let prefixed = if err.is_instance_of::<NativeInputError>(py) {
        NativeInputError::new_err(message)
    } else if err.is_instance_of::<NativeTypeError>(py) {
        NativeTypeError::new_err(message)
    } else {
        return err;
    };
    prefixed.set_cause(py, err.cause(py));
    prefixed
}

/// The error for a string that UTF-8 cannot encode (it holds a lone surrogate).
pub(crate) fn not_unicode(py: Python<'_>, field: &str, err: PyErr) -> PyErr {
    let native = NativeInputError::new_err(format!(
        "{field} contains a lone surrogate, which UTF-8 cannot encode"
    ));
    native.set_cause(py, Some(err));
    native
}
