//! The tee store a command opens, from `--tee-store`, `--no-tee` and the project folder: the
//! settings' store as `parrot_setup` opens it, its errors as the command's failures.

pub(crate) use parrot_setup::{Deferred, Persistent, StoreAt};

use crate::Failure;
use crate::args::Options;

pub(crate) fn store_at(cli: &Options) -> StoreAt {
    StoreAt::of(&cli.settings())
}

/// The store for the commands that only read it (`recover`, `store`); see
/// [`parrot_setup::store_only`].
pub(crate) fn store_only(cli: &Options) -> Result<Persistent, Failure> {
    parrot_setup::store_only(&cli.settings()).map_err(Failure::from)
}
