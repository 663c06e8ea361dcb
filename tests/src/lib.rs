//! Integration tests of parrot-compress live in `tests/`; this library is empty.
