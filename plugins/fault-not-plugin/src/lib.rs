//! Test fixture: a shared library that exports a function but no codec plugin root module.
#![allow(unsafe_code)]

/// An unrelated exported function.
#[unsafe(no_mangle)]
pub extern "C" fn parrot_fixture_answer() -> i32 {
    42
}
