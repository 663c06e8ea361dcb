//! Test fixture: a library that exports a codec-plugin root module built against interface
//! version 0.0.3, which no 0.1 host accepts. Not shipped.
#![allow(non_local_definitions, missing_docs)]

use abi_stable::{
    declare_root_module_statics, export_root_module, library::RootModule,
    prefix_type::PrefixTypeTrait, sabi_types::VersionStrings, StableAbi,
};

#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = OldPluginModRef)))]
#[sabi(missing_field(panic))]
pub struct OldPluginMod {
    #[sabi(last_prefix_field)]
    pub unwinds: bool,
}

impl RootModule for OldPluginModRef {
    declare_root_module_statics! {OldPluginModRef}
    const BASE_NAME: &'static str = "parrot_codec_plugin";
    const NAME: &'static str = "parrot-compress codec plugin";
    const VERSION_STRINGS: VersionStrings = VersionStrings::new("0.0.3");
}

#[export_root_module]
fn root_module() -> OldPluginModRef {
    OldPluginMod { unwinds: true }.leak_into_prefix()
}
