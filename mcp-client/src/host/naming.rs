//! Names for tools and prompts across servers that never collide.
//!
//! The default scheme prefixes every name with its server's:
//! `{server}__{tool}`, which is what agents that host many servers already
//! show models. Characters a tool name may not have (the spec allows
//! `A-Z a-z 0-9 _ - .`) become `_`, and a name past 64 characters is cut
//! and ends in a short hash of the whole, so that two long names stay
//! apart. [`Naming::OnCollision`] keeps a name that only one server has as
//! it is and prefixes only the others.

use std::collections::{HashMap, HashSet};

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
        let (Naming::Prefixed { separator } | Naming::OnCollision { separator }) = self;
        let mut servers: Vec<&str> = pairs.iter().map(|(s, _)| *s).collect();
        servers.sort_unstable();
        servers.dedup();
        let prefixes = Prefixes::new(&servers, separator);
        let mut count: HashMap<&str, usize> = HashMap::new();
        for (_, name) in pairs {
            *count.entry(name).or_default() += 1;
        }
        let mut taken: HashSet<String> = HashSet::new();
        let mut out = Vec::with_capacity(pairs.len());
        for (server, name) in pairs {
            let prefixed = || join(server, separator, name);
            let bare = match self {
                Naming::Prefixed { .. } => None,
                // A bare name in a server's prefix (`web__read` listed by
                // another server) would pass for that server's tool.
                Naming::OnCollision { .. } => Some(fit(&clean(name)))
                    .filter(|bare| count[name] == 1 && prefixes.owner(bare).is_none()),
            };
            // A name is this server's if no other server's prefix claims it
            // (a bare one: if no server's prefix does).
            let own = prefixes.own(server);
            let ours = |n: &str| match prefixes.owner(n) {
                Some(prefix) => bare.is_none() && prefix == own,
                None => true,
            };
            let candidate = bare.clone().unwrap_or_else(prefixed);
            let chosen = pick(&candidate, &taken, ours).unwrap_or_else(|| {
                // The name lies in another server's prefix (servers `a` and
                // `a__b`, and a tool `b__c` of `a`): named by a hash of the
                // whole instead, under its own server's prefix.
                let hashed = fit(&format!("{own}{}", hash(&prefixed())));
                pick(&hashed, &taken, |n| {
                    prefixes.owner(n).is_none_or(|p| p == own)
                })
                .unwrap_or(hashed)
            });
            // Every name given is taken, suffixed ones too: a later tool
            // whose own name is `a_b_2` never gets a name already given.
            taken.insert(chosen.clone());
            out.push(chosen);
        }
        out
    }
}

/// The first of `candidate`, `candidate_2`, `candidate_3`, ... that is
/// free and `fits` (the bound only guards against a pathological list).
fn pick(candidate: &str, taken: &HashSet<String>, fits: impl Fn(&str) -> bool) -> Option<String> {
    (1..=10_000).find_map(|n| {
        let name = if n == 1 {
            candidate.to_owned()
        } else {
            fit(&format!("{candidate}_{n}"))
        };
        (!taken.contains(&name) && fits(&name)).then_some(name)
    })
}

/// Each server's prefix (`{server}{separator}`, cleaned), to tell which
/// server a name belongs to.
struct Prefixes<'a> {
    /// Longest first, so that a server `a__b` wins over `a` for `a__b__c`.
    by_length: Vec<String>,
    separator: &'a str,
}

impl<'a> Prefixes<'a> {
    fn new(servers: &[&str], separator: &'a str) -> Self {
        let mut by_length: Vec<String> = servers
            .iter()
            .map(|s| format!("{}{separator}", clean(s)))
            .collect();
        by_length.sort_by_key(|p| std::cmp::Reverse(p.len()));
        Prefixes {
            by_length,
            separator,
        }
    }

    fn own(&self, server: &str) -> String {
        format!("{}{}", clean(server), self.separator)
    }

    /// The prefix of a server that `name` starts with (the longest such).
    fn owner(&self, name: &str) -> Option<&str> {
        self.by_length
            .iter()
            .find(|prefix| name.starts_with(prefix.as_str()))
            .map(String::as_str)
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
    format!("{}_{}", &name[..MAX_NAME - 9], hash(name))
}

/// 8 hex digits of FNV-1a: stable across runs and platforms.
fn hash(name: &str) -> String {
    let hash = name.bytes().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    format!("{hash:08x}")
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

    /// Every name is given once, suffixed ones included.
    #[test]
    fn suffixed_names_are_never_given_twice() {
        let names = Naming::default().names(&[("s", "a b"), ("s", "a_b"), ("s", "a_b_2")]);
        assert_eq!(names, ["s__a_b", "s__a_b_2", "s__a_b_2_2"]);
        let on_collision = Naming::OnCollision {
            separator: "__".into(),
        };
        let names = on_collision.names(&[("s", "x y"), ("s", "x_y"), ("t", "x_y_2")]);
        assert_eq!(names, ["x_y", "x_y_2", "x_y_2_2"]);
    }

    /// A server cannot list a tool whose name falls in another server's
    /// prefix and so pass for that server's tool.
    #[test]
    fn no_server_takes_a_name_in_another_servers_prefix() {
        let on_collision = Naming::OnCollision {
            separator: "__".into(),
        };
        let pairs = [("evil", "web__read"), ("files", "read"), ("web", "read")];
        let names = on_collision.names(&pairs);
        assert_eq!(names, ["evil__web__read", "files__read", "web__read"]);
        // Even when it is the only one: a bare name never starts with a
        // server's prefix.
        let names = on_collision.names(&[("evil", "web__read"), ("web", "search")]);
        assert_eq!(names, ["evil__web__read", "search"]);
        // Nested server names: `a__b__c` is the server `a__b`'s.
        let names = Naming::default().names(&[("a", "b__c"), ("a__b", "c")]);
        assert_eq!(names[1], "a__b__c");
        assert!(names[0].starts_with("a__") && !names[0].starts_with("a__b__"));
        assert_eq!(names[0].len(), "a__".len() + 8, "{names:?}");
    }

    /// Many awkward lists: every name distinct, each under its own
    /// server's prefix (or under none, for a bare one).
    #[test]
    fn every_name_is_distinct_and_in_its_own_servers_namespace() {
        let servers = ["a", "a__b", "web", "w e b"];
        let tools = [
            "b__c",
            "c",
            "read",
            "web__read",
            "a_b",
            "a b",
            "a_b_2",
            "r",
            "r_2",
        ];
        let mut pairs = Vec::new();
        for server in servers {
            for tool in tools {
                pairs.push((server, tool));
            }
        }
        // Some unique names too, for OnCollision's bare names.
        pairs.push(("web", "only_web"));
        pairs.push(("a", "a__b__zzz"));
        for naming in [
            Naming::default(),
            Naming::OnCollision {
                separator: "__".into(),
            },
        ] {
            let names = naming.names(&pairs);
            let distinct: HashSet<&String> = names.iter().collect();
            assert_eq!(distinct.len(), names.len(), "{naming:?}: {names:?}");
            let prefixes = Prefixes::new(&servers, "__");
            for ((server, tool), name) in pairs.iter().zip(&names) {
                if let Some(owner) = prefixes.owner(name) {
                    assert_eq!(owner, prefixes.own(server), "{server}/{tool} -> {name}");
                }
            }
        }
    }
}
