//! A call, step by step.

pub(crate) mod after_attempt;
