#![doc = include_str!("../../../ARCHITECTURE.md")]
// The crates are linked from the included page, not used in code.
#![allow(unused_crate_dependencies)]
