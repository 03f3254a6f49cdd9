//! The Skills extension (SEP-2640) from the host's side, in both eras,
//! against a server whose every answer the test controls: nothing fetched
//! before need (requests counted on the wire); a digest, size or
//! frontmatter mismatch and an unlisted file each failing with a typed
//! error and no content; a skill that changed recovered by `skills/get`;
//! `resources/directory/read` never sent without `directoryRead`; and two
//! servers' same-named skills kept apart in the host.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use common::{FnConnector, FnServer, Reply};
use mcp_client::host::Host;
use mcp_client::skills::{SkillCache, SkillError};
use mcp_client::{Client, EraMode, ErrorKind};
use mcp_protocol::Request;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const SKILL: &str = "skill://pdf-processing/SKILL.md";
const FORMS: &str = "skill://pdf-processing/references/FORMS.md";

const SKILL_MD: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nRead [the forms](references/FORMS.md).\n";
const FORMS_MD: &str = "The forms.\n";

fn digest(text: &str) -> String {
    let hash = Sha256::digest(text.as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// A skills server: what it lists (the entry is computed from `listed`)
/// and what it serves (`served`, which a test may tamper with).
struct Skills {
    listed: BTreeMap<String, String>,
    served: BTreeMap<String, String>,
    /// What `skills/get` answers from: `listed`, unless set.
    current: Option<BTreeMap<String, String>>,
    directory_read: bool,
}

impl Skills {
    fn honest(skill_md: &str) -> Skills {
        let files: BTreeMap<String, String> = [(SKILL, skill_md), (FORMS, FORMS_MD)]
            .into_iter()
            .map(|(u, t)| (u.to_owned(), t.to_owned()))
            .collect();
        Skills {
            listed: files.clone(),
            served: files,
            current: None,
            directory_read: false,
        }
    }
}

fn entry_of(files: &BTreeMap<String, String>, description: &str) -> Value {
    let resources: Vec<Value> = files
        .iter()
        .map(|(uri, text)| json!({"uri": uri, "digest": digest(text), "size": text.len()}))
        .collect();
    json!({
        "uri": SKILL,
        "frontmatter": {"name": "pdf-processing", "description": description},
        "resources": resources,
    })
}

const DESCRIPTION: &str = "Extract, fill, and assemble PDF documents";

fn serve(state: Arc<Mutex<Skills>>) -> Arc<FnServer> {
    FnServer::new(move |_, r| {
        let s = state.lock().unwrap();
        let settings = if s.directory_read {
            json!({"directoryRead": true})
        } else {
            json!({})
        };
        let caps =
            json!({"resources": {}, "extensions": {"io.modelcontextprotocol/skills": settings}});
        // A legacy client keeps `resultType` as a member it does not know.
        let complete = |mut v: Value| {
            v["resultType"] = json!("complete");
            Reply::Ok(v)
        };
        match r.method.as_str() {
            "initialize" => Reply::Ok(json!({
                "protocolVersion": r.params.as_ref().unwrap()["protocolVersion"],
                "capabilities": caps,
                "serverInfo": {"name": "skills", "version": "1"},
            })),
            "server/discover" => Reply::Ok(json!({
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": caps,
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "skills", "version": "1"}},
                "ttlMs": 0,
                "cacheScope": "public",
            })),
            "skills/list" => complete(json!({
                "skills": [entry_of(&s.listed, DESCRIPTION)],
                "ttlMs": 60_000,
                "cacheScope": "private",
            })),
            "skills/get" => complete(json!({
                "skill": entry_of(s.current.as_ref().unwrap_or(&s.listed), DESCRIPTION)
            })),
            "resources/read" => {
                let uri = uri_of(r);
                match s.served.get(&uri) {
                    Some(text) => complete(json!({
                        "contents": [{"uri": uri, "mimeType": "text/markdown", "text": text}],
                        "ttlMs": 60_000,
                    })),
                    None => Reply::Err(-32602, "no such resource", None),
                }
            }
            "resources/directory/read" => complete(json!({"resources": [
                {"uri": FORMS, "name": "FORMS.md", "mimeType": "text/markdown"}
            ]})),
            _ => Reply::Err(-32601, "no such method", None),
        }
    })
}

fn uri_of(r: &Request) -> String {
    r.params.as_ref().unwrap()["uri"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn connect(era: EraMode, server: &Arc<FnServer>) -> Client {
    Client::builder()
        .era(era)
        .connect(FnConnector(server.clone()))
        .await
        .unwrap()
}

/// The URIs of the `resources/read` requests on the wire, in order.
fn reads(server: &FnServer) -> Vec<String> {
    server
        .requests()
        .iter()
        .filter(|r| r.method == "resources/read")
        .map(uri_of)
        .collect()
}

fn count(server: &FnServer, method: &str) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.method == method)
        .count()
}

const ERAS: [EraMode; 2] = [EraMode::Legacy, EraMode::Modern];

#[tokio::test]
async fn nothing_is_fetched_before_need_and_verified_files_are_kept() {
    for era in ERAS {
        let state = Arc::new(Mutex::new(Skills::honest(SKILL_MD)));
        let server = serve(state);
        let client = connect(era, &server).await;
        assert!(client.skills_extension().is_some(), "{era:?}");
        let entries = client.list_all_skills().await.unwrap();
        let entry = client.get_skill(SKILL).await.unwrap();
        assert_eq!(entries[0], entry);
        let cache = SkillCache::new();
        let loader = client.skill_loader("pdf-server").cache(cache.clone());
        assert!(reads(&server).is_empty(), "{era:?}: read before need");

        let skill = loader.load(&entry).await.unwrap();
        assert_eq!(reads(&server), [SKILL], "{era:?}: only SKILL.md on load");
        assert_eq!(skill.origin(), "pdf-server");
        assert_eq!(skill.body(), "\nRead [the forms](references/FORMS.md).\n");
        let forms = skill.read("references/FORMS.md").await.unwrap();
        assert_eq!(forms.text(), Some(FORMS_MD));
        assert_eq!(reads(&server), [SKILL, FORMS], "{era:?}");

        // Kept while the digest matches: neither file is fetched again.
        skill.read(FORMS).await.unwrap();
        client
            .skill_loader("pdf-server")
            .cache(cache.clone())
            .load(&entry)
            .await
            .unwrap();
        assert_eq!(reads(&server).len(), 2, "{era:?}: served from the cache");
        // Another origin has a copy of its own.
        client
            .skill_loader("another")
            .cache(cache.clone())
            .load(&entry)
            .await
            .unwrap();
        assert_eq!(reads(&server).len(), 3, "{era:?}: keyed by origin too");
        assert!(matches!(
            skill.read("../other/SKILL.md").await,
            Err(SkillError::OutsideSkill { .. })
        ));
        assert_eq!(count(&server, "resources/directory/read"), 0);
    }
}

#[tokio::test]
async fn skills_list_is_cached_for_its_ttl_in_2026() {
    let server = serve(Arc::new(Mutex::new(Skills::honest(SKILL_MD))));
    let client = connect(EraMode::Modern, &server).await;
    client.list_skills().await.unwrap();
    client.list_skills().await.unwrap();
    assert_eq!(
        count(&server, "skills/list"),
        1,
        "the second is served fresh"
    );
}

/// Loads the listed skill with `served` put in place of its SKILL.md, and
/// returns the error with what was read.
async fn load_tampered(era: EraMode, listed: &str, served: &str) -> (SkillError, Vec<String>) {
    let mut skills = Skills::honest(listed);
    skills.served.insert(SKILL.into(), served.into());
    let server = serve(Arc::new(Mutex::new(skills)));
    let client = connect(era, &server).await;
    let entry = client.list_all_skills().await.unwrap().remove(0);
    let error = client
        .skill_loader("s")
        .load(&entry)
        .await
        .expect_err("the tampered SKILL.md must not load");
    (error, reads(&server))
}

#[tokio::test]
async fn a_digest_mismatch_fails_the_load() {
    for era in ERAS {
        let served = SKILL_MD.replace("Read", "Rm -"); // same length
        assert_eq!(served.len(), SKILL_MD.len());
        let (error, reads) = load_tampered(era, SKILL_MD, &served).await;
        assert!(
            matches!(&error, SkillError::DigestMismatch { uri, .. } if uri == SKILL),
            "{era:?}: {error}"
        );
        assert_eq!(reads, [SKILL], "{era:?}: nothing read after the failure");
    }
}

#[tokio::test]
async fn a_size_mismatch_fails_the_load() {
    for era in ERAS {
        let served = format!("{SKILL_MD}extra bytes\n");
        let (error, reads) = load_tampered(era, SKILL_MD, &served).await;
        assert!(
            matches!(error, SkillError::SizeMismatch { expected, actual, .. }
                if expected == SKILL_MD.len() as u64 && actual == served.len() as u64),
            "{era:?}: {error}"
        );
        assert_eq!(reads, [SKILL]);
    }
}

#[tokio::test]
async fn a_frontmatter_mismatch_fails_the_load() {
    for era in ERAS {
        // Listed and served alike (digest and size hold); only the
        // frontmatter disagrees with the entry's.
        let tampered = SKILL_MD.replace(DESCRIPTION, "Exfiltrate credentials");
        let (error, reads) = load_tampered(era, &tampered, &tampered).await;
        assert!(
            matches!(&error, SkillError::FrontmatterMismatch { field, .. } if field == "description"),
            "{era:?}: {error}"
        );
        assert_eq!(reads, [SKILL]);
    }
}

#[tokio::test]
async fn an_unlisted_file_is_refused_unread() {
    for era in ERAS {
        let mut skills = Skills::honest(SKILL_MD);
        let new = "skill://pdf-processing/references/NEW.md";
        skills.served.insert(new.into(), "new\n".into());
        let server = serve(Arc::new(Mutex::new(skills)));
        let client = connect(era, &server).await;
        let entry = client.get_skill(SKILL).await.unwrap();
        let skill = client.skill_loader("s").load(&entry).await.unwrap();
        let error = skill.read("references/NEW.md").await.unwrap_err();
        assert!(
            matches!(&error, SkillError::Unlisted { uri } if uri == new),
            "{era:?}: {error}"
        );
        assert_eq!(
            reads(&server),
            [SKILL],
            "{era:?}: the unlisted file is never read"
        );
    }
}

#[tokio::test]
async fn a_changed_skill_is_recovered_by_skills_get_never_by_its_bytes() {
    let state = Arc::new(Mutex::new(Skills::honest(SKILL_MD)));
    let server = serve(state.clone());
    let client = connect(EraMode::Legacy, &server).await;
    let old = client.list_all_skills().await.unwrap().remove(0);
    // The skill is updated on the server after the listing.
    let updated = format!("{SKILL_MD}\nA new step.\n");
    {
        let mut s = state.lock().unwrap();
        s.served.insert(SKILL.into(), updated.clone());
        let mut current = s.listed.clone();
        current.insert(SKILL.into(), updated.clone());
        s.current = Some(current);
    }
    let loader = client.skill_loader("s");
    let error = loader.load(&old).await.unwrap_err();
    let SkillError::Changed { entry, cause } = error else {
        panic!("expected Changed, got {error}");
    };
    assert!(matches!(*cause, SkillError::SizeMismatch { .. }));
    assert_eq!(count(&server, "skills/get"), 1);
    // Under the new entry (once approved again) the skill loads.
    let skill = loader.load(&entry).await.unwrap();
    assert_eq!(skill.text(), updated);
}

#[tokio::test]
async fn directory_reads_need_directory_read() {
    for declared in [false, true] {
        let mut skills = Skills::honest(SKILL_MD);
        skills.directory_read = declared;
        let server = serve(Arc::new(Mutex::new(skills)));
        // Even a client that sends regardless of capabilities holds it back.
        let client = Client::builder()
            .era(EraMode::Legacy)
            .enforce_server_capabilities(false)
            .connect(FnConnector(server.clone()))
            .await
            .unwrap();
        let read = client
            .read_all_directory("skill://pdf-processing/references")
            .await;
        if declared {
            assert_eq!(read.unwrap()[0].uri, FORMS);
            assert_eq!(count(&server, "resources/directory/read"), 1);
        } else {
            let error = read.unwrap_err();
            assert!(
                matches!(error.kind(), ErrorKind::CapabilityNotAdvertised { .. }),
                "{error}"
            );
            assert_eq!(count(&server, "resources/directory/read"), 0);
        }
    }
}

#[tokio::test]
async fn two_servers_skills_of_one_name_stay_apart_in_the_host() {
    let one = serve(Arc::new(Mutex::new(Skills::honest(SKILL_MD))));
    let other_md = SKILL_MD.replace("Read [the forms]", "Fill [the forms]");
    let two = serve(Arc::new(Mutex::new(Skills::honest(&other_md))));
    let host = Host::builder()
        .server("one", FnConnector(one.clone()))
        .server("two", FnConnector(two.clone()))
        .connect()
        .await;
    let skills = host.list_skills().await;
    let names: Vec<(&str, &str)> = skills
        .iter()
        .map(|s| (s.name.as_str(), s.server.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("one__pdf-processing", "one"),
            ("two__pdf-processing", "two")
        ]
    );
    assert!(
        reads(&one).is_empty() && reads(&two).is_empty(),
        "listing reads nothing"
    );
    let first = host.load_skill("one__pdf-processing").await.unwrap();
    let second = host.load_skill("two__pdf-processing").await.unwrap();
    assert_eq!((first.origin(), second.origin()), ("one", "two"));
    assert_eq!(first.text(), SKILL_MD);
    assert_eq!(second.text(), other_md);
    // One cache, two copies of one URI: keyed by server and URI.
    assert_eq!(host.skill_cache().len(), 2);
    assert_eq!(
        (reads(&one), reads(&two)),
        (vec![SKILL.to_owned()], vec![SKILL.to_owned()])
    );
    assert!(
        host.load_skill("pdf-processing").await.is_err(),
        "no bare name"
    );
    host.close().await;
}
