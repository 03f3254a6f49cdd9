//! Names for tools and prompts across servers that never collide.
//!
//! The default scheme prefixes every name with its server's:
//! `{server}__{tool}`, which is what agents that host many servers already
//! show models. Characters a tool name may not have (the spec allows
//! `A-Z a-z 0-9 _ - .`) become `_`, and a name past 64 characters is cut
//! and ends in a short hash of the whole, so that two long names stay
//! apart. [`Naming::OnCollision`] keeps a name that only one server has as
//! it is and prefixes only the others.

use std::collections::{BTreeMap, HashMap};

/// The longest tool name clients are asked to accept.
pub const MAX_NAME: usize = 64;

/// How tools and prompts of many servers are named in one list.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Naming {
    /// Every name is `{server}{separator}{name}`.
    Prefixed {
        /// Between the server's name and the tool's (default `__`).
        separator: String,
    },
    /// A name only one server has stays as it is; names several servers
    /// share are prefixed as by [`Naming::Prefixed`].
    OnCollision {
        /// Between the server's name and the tool's.
        separator: String,
    },
}

impl Default for Naming {
    fn default() -> Self {
        Naming::Prefixed {
            separator: "__".into(),
        }
    }
}

impl Naming {
    /// The names of `(server, name)` pairs, in order, all distinct.
    ///
    /// ```
    /// use mcp_client::host::Naming;
    ///
    /// let pairs = [("files", "read"), ("web", "read"), ("web", "search")];
    /// assert_eq!(Naming::default().names(&pairs), ["files__read", "web__read", "web__search"]);
    /// let on_collision = Naming::OnCollision { separator: "__".into() };
    /// assert_eq!(on_collision.names(&pairs), ["files__read", "web__read", "search"]);
    /// ```
    pub fn names(&self, pairs: &[(&str, &str)]) -> Vec<String> {
        let mut count: HashMap<&str, usize> = HashMap::new();
        for (_, name) in pairs {
            *count.entry(name).or_default() += 1;
        }
        let mut taken: BTreeMap<String, usize> = BTreeMap::new();
        let mut out = Vec::with_capacity(pairs.len());
        for (server, name) in pairs {
            let candidate = match self {
                Naming::Prefixed { separator } => join(server, separator, name),
                Naming::OnCollision { separator } => {
                    if count[name] == 1 {
                        fit(&clean(name))
                    } else {
                        join(server, separator, name)
                    }
                }
            };
            // Cleaning can still make two names equal ("a.b" and "a_b"):
            // the later one gets a numbered suffix.
            let n = taken.entry(candidate.clone()).or_default();
            *n += 1;
            out.push(if *n == 1 {
                candidate
            } else {
                fit(&format!("{candidate}_{n}"))
            });
        }
        out
    }
}

fn join(server: &str, separator: &str, name: &str) -> String {
    fit(&format!("{}{}{}", clean(server), separator, clean(name)))
}

fn clean(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Cuts a name to [`MAX_NAME`], ending a cut one in 8 hex digits of a hash
/// of the whole (FNV-1a: stable across runs and platforms).
fn fit(name: &str) -> String {
    if name.len() <= MAX_NAME {
        return name.to_owned();
    }
    let hash = name.bytes().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    format!("{}_{hash:08x}", &name[..MAX_NAME - 9])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_and_odd_names_fit_and_stay_apart() {
        let long = "x".repeat(80);
        let names = Naming::default().names(&[("srv", &long), ("srv", &format!("{long}y"))]);
        assert!(names.iter().all(|n| n.len() <= MAX_NAME), "{names:?}");
        assert_ne!(names[0], names[1]);
        let odd = Naming::default().names(&[("my server", "a.b"), ("my server", "a b")]);
        assert_eq!(odd, ["my_server__a.b", "my_server__a_b"]);
        let clash = Naming::default().names(&[("s", "a b"), ("s", "a_b")]);
        assert_eq!(clash, ["s__a_b", "s__a_b_2"]);
    }
}
